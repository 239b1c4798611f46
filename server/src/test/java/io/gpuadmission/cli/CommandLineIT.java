package io.gpuadmission.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gpuadmission.support.Fixtures;
import io.gpuadmission.testing.PackagedApp;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The command line as users run it: the packaged jar (cli mode chosen by the arguments), and
 * {@code kubectl gpu-admission} through {@code bin/kubectl-gpu_admission} on PATH. The output is
 * the one {@link CommandLineTest} expects in-process. The native build runs the same commands on
 * its executable; the plugin's tests, which start the jar with a JDK, are the JVM build's only.
 */
class CommandLineIT {
  private static final Path PROJECT = Path.of("").toAbsolutePath();
  private static final String R = "server/src/test/resources/";

  @Test
  void theJarExplainsSeed004AsTheTestsInProcessDo() {
    var run = PackagedApp.run(PROJECT, Map.of(), "explain", "-f", R + "workloads/pytorchjob-worker-2-gpus.yaml");

    assertThat(run.stderr()).isEmpty();
    assertThat(run.stdout()).isEqualTo(Fixtures.text(Fixtures.path("cli/expected/explain-seed004-refused.txt")));
    assertThat(run.exitCode()).isEqualTo(1);
  }

  @Test
  void kubectlRunsItAsAPlugin() {
    assumeFalse(PackagedApp.isNative(), "the kubectl plugin starts the jar with a JDK: the JVM build's");
    var kubectl = onPath("kubectl");
    assumeTrue(kubectl != null, "no kubectl on PATH: the plugin is not tried");
    var env =
        Map.of(
            "PATH", PROJECT.resolve("bin") + File.pathSeparator + System.getenv("PATH"),
            "JAVA_HOME", System.getProperty("java.home"),
            "GPU_ADMISSION_CLI_CACHE", "off");

    var run =
        PackagedApp.runCommand(
            PROJECT,
            env,
            List.of(kubectl.toString(), "gpu-admission", "place", "--policy", R + "gang/policy.yaml", "--cluster", R + "gang/nodes.yaml", "-f",
                R + "cli/bert-gang.yaml", "-f", R + "workloads/pytorchjob-consistent.yaml", "-f", R + "workloads/pytorchjob-worker-2-gpus.yaml"));

    assertThat(run.stderr()).isEmpty();
    assertThat(run.stdout()).isEqualTo(Fixtures.text(Fixtures.path("cli/expected/place-gangs.txt")));
    assertThat(run.exitCode()).isEqualTo(1);
  }

  @Test
  void theFirstRunWritesAClassDataArchiveTheNextRunsUseWithTheSameAnswer() throws Exception {
    assumeFalse(PackagedApp.isNative(), "the kubectl plugin starts the jar with a JDK: the JVM build's");
    var cache = Files.createTempDirectory("cli-cache");
    var env = Map.of("GPU_ADMISSION_CLI_CACHE", "on", "GPU_ADMISSION_CACHE_DIR", cache.toString(), "JAVA", javaExecutable());
    var command = List.of(PROJECT.resolve("bin/kubectl-gpu_admission").toString(), "explain", "-f", R + "workloads/pytorchjob-worker-2-gpus.yaml");

    var first = PackagedApp.runCommand(PROJECT, env, command);
    try (var files = Files.list(cache)) {
      assertThat(files.map(f -> f.getFileName().toString())).singleElement().satisfies(name -> assertThat(name).matches("cli-[0-9]+-[0-9]+\\.jsa"));
    }
    var second = PackagedApp.runCommand(PROJECT, env, command);

    for (var run : List.of(first, second)) {
      assertThat(run.stderr()).isEmpty();
      assertThat(run.stdout()).isEqualTo(Fixtures.text(Fixtures.path("cli/expected/explain-seed004-refused.txt")));
      assertThat(run.exitCode()).isEqualTo(1);
    }
  }

  private static String javaExecutable() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  @Test
  void aJavaHomeOlderThan25YieldsToTheJdkThatBuiltTheJar() throws Exception {
    assumeFalse(PackagedApp.isNative(), "the kubectl plugin starts the jar with a JDK: the JVM build's");
    // What setup-java 17 in a CI job, or a workstation's JDK 17, leaves in JAVA_HOME.
    var jdk17 = Files.createTempDirectory("jdk17");
    Files.writeString(jdk17.resolve("release"), "JAVA_VERSION=\"17.0.15\"\n");
    var java = Files.createDirectories(jdk17.resolve("bin")).resolve("java");
    Files.writeString(java, "#!/bin/sh\necho 'the JDK 17 ran' >&2\nexit 99\n");
    java.toFile().setExecutable(true);
    var env = Map.of("JAVA_HOME", jdk17.toString(), "GPU_ADMISSION_CLI_CACHE", "off");

    var run = PackagedApp.runCommand(PROJECT, env, List.of(PROJECT.resolve("bin/kubectl-gpu_admission").toString(), "explain", "-f",
        R + "workloads/pytorchjob-worker-2-gpus.yaml"));

    assertThat(run.stderr()).isEmpty();
    assertThat(run.stdout()).isEqualTo(Fixtures.text(Fixtures.path("cli/expected/explain-seed004-refused.txt")));
    assertThat(run.exitCode()).isEqualTo(1);
  }

  @Test
  void anExplicitJavaOlderThan25IsRefusedNamingIt() throws Exception {
    var jdk17 = Files.createTempDirectory("jdk17");
    Files.writeString(jdk17.resolve("release"), "JAVA_VERSION=\"17.0.15\"\n");
    var java = Files.createDirectories(jdk17.resolve("bin")).resolve("java");
    Files.writeString(java, "#!/bin/sh\nexit 99\n");
    java.toFile().setExecutable(true);

    var run = PackagedApp.runCommand(PROJECT, Map.of("JAVA", java.toString()), List.of(PROJECT.resolve("bin/kubectl-gpu_admission").toString(), "--version"));

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stderr()).isEqualTo("kubectl-gpu_admission: " + java + " is Java 17; gpu-admission needs Java 25 (set JAVA_HOME to a JDK 25)\n");
  }

  @Test
  void thePluginSaysWhereTheJarIsMissing() throws Exception {
    var elsewhere = Files.createTempDirectory("plugin");
    var copy = Files.copy(PROJECT.resolve("bin/kubectl-gpu_admission"), elsewhere.resolve("kubectl-gpu_admission"), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);

    var run = PackagedApp.runCommand(PROJECT, Map.of(), List.of(copy.toString(), "--version"));

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stderr())
        .isEqualTo("kubectl-gpu_admission: no quarkus-run.jar found (set GPU_ADMISSION_JAR, or run ./mvnw package in the repository)\n");
  }

  private static Path onPath(String program) {
    for (var directory : System.getenv("PATH").split(File.pathSeparator)) {
      var candidate = Path.of(directory, program);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }
}
