package io.gpuadmission.node;

import java.util.Optional;
import java.util.logging.Level;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.Config;
import org.jboss.logmanager.LogContext;
import org.jboss.logmanager.formatters.PatternFormatter;
import org.jboss.logmanager.handlers.ConsoleHandler;

/**
 * The node agent's log without Quarkus: one line a record on stdout, in server mode's format, with
 * the levels application.properties and the environment give ({@code quarkus.log.level}, {@code
 * quarkus.log.category."NAME".level}, {@code quarkus.log.console.format}). Netty's bootstrap says
 * only errors unless they say otherwise: grpc-java asks every connection for TCP keep-alive, which
 * a Unix socket does not have, and Netty would warn of it at each connection the kubelet makes.
 *
 * <p>jboss-logmanager carries every library's log (jboss-logging, JUL), as in server mode.
 */
final class NodeAgentLogging {
  static final String FORMAT = "%d{HH:mm:ss.SSS} %-5p [%c{2.}] %s%e%n";
  private static final Pattern CATEGORY = Pattern.compile("quarkus\\.log\\.category\\.\"([^\"]+)\"\\.level");

  private NodeAgentLogging() {}

  /** Before anything logs: jboss-logmanager as the JDK's log manager ({@link NodeAgentLauncher} calls it before any logger exists). */
  static void useLogManager() {
    if (System.getProperty("java.util.logging.manager") == null) {
      System.setProperty("java.util.logging.manager", org.jboss.logmanager.LogManager.class.getName());
    }
  }

  /** Console on stdout, levels from {@code config} when it could be read (else INFO and the format above). */
  static void configure(Optional<Config> config) {
    var context = LogContext.getLogContext();
    var format = config.flatMap(c -> c.getOptionalValue("quarkus.log.console.format", String.class)).orElse(FORMAT);
    var console = new ConsoleHandler(ConsoleHandler.Target.SYSTEM_OUT, new PatternFormatter(format));
    var root = context.getLogger("");
    root.setLevel(config.flatMap(c -> c.getOptionalValue("quarkus.log.level", String.class)).map(NodeAgentLogging::level).orElse(Level.INFO));
    context.getLogger("io.netty.bootstrap").setLevel(Level.SEVERE);
    config.ifPresent(c -> {
      for (var name : c.getPropertyNames()) {
        var category = CATEGORY.matcher(name);
        if (category.matches()) {
          c.getOptionalValue(name, String.class).ifPresent(level -> context.getLogger(category.group(1)).setLevel(level(level)));
        }
      }
    });
    // In place of, not beside, the console handler jboss-logmanager installs by default: one line per record.
    root.setHandlers(new java.util.logging.Handler[] {console});
  }

  private static Level level(String name) {
    return org.jboss.logmanager.Level.parse(name.trim().toUpperCase(java.util.Locale.ROOT));
  }
}
