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
    assertThat(new RunModeConverter().convert("cli")).isEqualTo(RunMode.CLI);
  }

  @Test
  void refusesAnyOtherNameNamingTheAcceptedOnes() {
    assertThatThrownBy(() -> RunMode.parse("SERVER_AND_CLI"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("gpu-admission.mode is \"SERVER_AND_CLI\": expected one of server, cli");
    // The node agent is the node-agent module's program, not a mode of this one.
    assertThatThrownBy(() -> RunMode.parse("node-agent")).hasMessage("gpu-admission.mode is \"node-agent\": expected one of server, cli");
  }

  @Test
  void serverModeChangesNoConfiguration() {
    assertThat(sourcesFor(null)).isEmpty();
    assertThat(sourcesFor("server")).isEmpty();
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
    assertThatThrownBy(() -> sourcesFor("sever")).hasMessageContaining("expected one of server, cli");
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
