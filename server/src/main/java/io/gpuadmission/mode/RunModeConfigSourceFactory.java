package io.gpuadmission.mode;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.PropertiesConfigSource;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * The configuration a mode implies, made from the mode itself (not a profile), so the mode is the
 * only thing to set, from wherever it comes (arguments, environment, properties):
 *
 * <ul>
 *   <li>In cli mode, no listener: {@code quarkus.http.host-enabled=false} is the runtime
 *       switch Quarkus 3.31 reads before it starts the HTTP and HTTPS servers (with it off, and no
 *       domain socket or management interface, {@code VertxHttpRecorder.startServer} starts
 *       neither). Above system properties: nothing turns the webhook's listener back on there.
 *   <li>In cli mode, stdout is the commands' answer alone: Quarkus' own lines (started in, profile,
 *       features) are INFO, so the log shows warnings and errors only, on stderr. Just above
 *       application.properties: {@code QUARKUS_LOG_LEVEL=DEBUG} still shows everything.
 * </ul>
 */
public final class RunModeConfigSourceFactory implements ConfigSourceFactory {
  static final String HOST_ENABLED = "quarkus.http.host-enabled";
  static final int LISTENER_ORDINAL = 500;
  static final int LOGGING_ORDINAL = 260;

  @Override
  public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
    var configured = context.getValue(RunMode.PROPERTY);
    var mode = configured == null || configured.getValue() == null ? RunMode.SERVER : RunMode.parse(configured.getValue());
    if (mode.servesWebhook()) {
      return List.of();
    }
    var listener = new PropertiesConfigSource(Map.of(HOST_ENABLED, "false"), "gpu-admission " + mode + " mode: no listener", LISTENER_ORDINAL);
    var logging =
        new PropertiesConfigSource(
            Map.of(
                "quarkus.log.level", "WARN",
                "quarkus.log.console.stderr", "true",
                // Quarkus 3.31's Netty binder registers one gauge twice and Micrometer warns of it
                // at every start (quarkusio/quarkus#52014): noise on every command's stderr.
                "quarkus.log.category.\"io.micrometer.core.instrument.MeterRegistry\".level", "ERROR"),
            "gpu-admission cli mode: quiet log on stderr",
            LOGGING_ORDINAL);
    return List.of(listener, logging);
  }
}
