package io.gpuadmission.admission;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * One WARN line per object the rules could not judge: its uid and the reason, no stack trace. A
 * malformed object arriving at the API server's rate would otherwise flood the log with traces;
 * the first frame says where it failed, and DEBUG on this category adds the whole trace. The API
 * server sends the same uid again when it reinvokes or retries a webhook: that is not logged twice.
 */
final class UnjudgedLog {
  private static final Logger LOG = Logger.getLogger(UnjudgedLog.class);
  /** Uids already logged, per endpoint; bounded, oldest forgotten first. */
  private static final int REMEMBERED = 1024;
  private static final Map<String, Boolean> LOGGED =
      Collections.synchronizedMap(
          new LinkedHashMap<>(16, 0.75f, false) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
              return size() > REMEMBERED;
            }
          });

  private UnjudgedLog() {}

  static void warn(String endpoint, String what, String uid, RuntimeException e) {
    if (LOGGED.putIfAbsent(endpoint + ' ' + uid, Boolean.TRUE) == null) {
      LOG.warnf("%s: could not judge %s (uid %s): %s", endpoint, what, uid, reason(e));
    }
    if (LOG.isDebugEnabled()) {
      LOG.debugf(e, "%s: trace for uid %s", endpoint, uid);
    }
  }

  /** The exception's type and message and the frame it was thrown from. */
  static String reason(Throwable e) {
    var text = new StringBuilder(e.getClass().getSimpleName());
    if (e.getMessage() != null) {
      text.append(": ").append(firstLine(e.getMessage()));
    }
    var trace = e.getStackTrace();
    if (trace.length > 0) {
      text.append(" (at ").append(trace[0].getClassName()).append('.').append(trace[0].getMethodName());
      text.append(':').append(trace[0].getLineNumber()).append(')');
    }
    return text.toString();
  }

  private static String firstLine(String message) {
    var newline = message.indexOf('\n');
    var line = newline < 0 ? message : message.substring(0, newline);
    return line.length() <= 300 ? line : line.substring(0, 297) + "...";
  }
}
