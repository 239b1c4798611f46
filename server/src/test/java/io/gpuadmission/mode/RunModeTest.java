package io.gpuadmission.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigValue;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.junit.jupiter.api.Test;

/** The mode's names, and the configuration each mode implies before Quarkus reads it. */
class RunModeTest {
  @Test
  void readsTheWrittenNames() {
    assertThat(RunMode.parse("server")).isEqualTo(RunMode.SERVER);
    assertThat(RunMode.parse(" CLI ")).isEqualTo(RunMode.CLI);
    assertThat(RunMode.parse("node-agent")).isEqualTo(RunMode.NODE_AGENT);
    assertThat(new RunModeConverter().convert("node-agent")).isEqualTo(RunMode.NODE_AGENT);
  }

  @Test
  void refusesAnyOtherNameNamingTheAcceptedOnes() {
    assertThatThrownBy(() -> RunMode.parse("NODE_AGENT"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("gpu-admission.mode is \"NODE_AGENT\": expected one of server, cli, node-agent");
  }

  @Test
  void serverModeChangesNoConfiguration() {
    assertThat(sourcesFor(null)).isEmpty();
    assertThat(sourcesFor("server")).isEmpty();
  }

  @Test
  void nodeAgentModeTurnsTheListenerOffAboveSystemProperties() {
    var sources = sourcesFor("node-agent");
    assertThat(sources).hasSize(1);
    assertThat(sources.get(0).getProperties()).isEqualTo(Map.of("quarkus.http.host-enabled", "false"));
    assertThat(sources.get(0).getOrdinal()).isGreaterThan(400);
  }

  @Test
  void cliModeTurnsTheListenerOffAndLogsWarningsToStderrBelowTheEnvironment() {
    var sources = sourcesFor("cli");
    assertThat(sources).hasSize(2);
    assertThat(sources.get(0).getProperties()).isEqualTo(Map.of("quarkus.http.host-enabled", "false"));
    assertThat(new TreeMap<>(sources.get(1).getProperties()))
        .containsExactlyEntriesOf(
            new TreeMap<>(
                Map.of(
                    "quarkus.log.level", "WARN",
                    "quarkus.log.console.stderr", "true",
                    "quarkus.log.category.\"io.micrometer.core.instrument.MeterRegistry\".level", "ERROR")));
    // QUARKUS_LOG_LEVEL (environment, 300) still wins: a user can debug a command.
    assertThat(sources.get(1).getOrdinal()).isBetween(251, 299);
  }

  @Test
  void aMisspelledModeStopsStartUp() {
    assertThatThrownBy(() -> sourcesFor("sever")).hasMessageContaining("expected one of server, cli, node-agent");
  }

  private static List<ConfigSource> sourcesFor(String mode) {
    var sources = new java.util.ArrayList<ConfigSource>();
    new RunModeConfigSourceFactory()
        .getConfigSources(
            new ConfigSourceContext() {
              @Override
              public ConfigValue getValue(String name) {
                return RunMode.PROPERTY.equals(name) && mode != null
                    ? ConfigValue.builder().withName(name).withValue(mode).build()
                    : null;
              }

              @Override
              public Iterator<String> iterateNames() {
                return Collections.emptyIterator();
              }
            })
        .forEach(sources::add);
    return sources;
  }
}
