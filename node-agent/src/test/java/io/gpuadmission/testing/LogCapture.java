package io.gpuadmission.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Collects what one logger category writes, through java.util.logging (JBoss LogManager in tests
 * and in the app alike). Optionally keeps the records off the console while capturing.
 */
public final class LogCapture extends Handler implements AutoCloseable {
  private final Logger logger;
  private final boolean parents;
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();

  private LogCapture(String category, boolean quiet) {
    this.logger = Logger.getLogger(category);
    this.parents = logger.getUseParentHandlers();
    logger.addHandler(this);
    if (quiet) {
      logger.setUseParentHandlers(false);
    }
  }

  public static LogCapture of(Class<?> category, boolean quiet) {
    return new LogCapture(category.getName(), quiet);
  }

  public static LogCapture of(String category, boolean quiet) {
    return new LogCapture(category, quiet);
  }

  public List<LogRecord> records() {
    return List.copyOf(records);
  }

  /** The message with its parameters filled in, as the console would print it. */
  public static String text(LogRecord record) {
    return record instanceof org.jboss.logmanager.ExtLogRecord ext
        ? ext.getFormattedMessage()
        : new java.util.logging.SimpleFormatter().formatMessage(record);
  }

  @Override
  public void publish(LogRecord record) {
    records.add(record);
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    logger.removeHandler(this);
    logger.setUseParentHandlers(parents);
  }
}
