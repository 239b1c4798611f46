package io.gpuadmission.health;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server starts from the AOT cache the build trained (target/quarkus-app/app.aot,
 * src/main/jvm/train.sh), through the launcher the README starts it with. The launcher runs with
 * {@code -XX:AOTMode=on}, which stops the JVM when it cannot use the cache; the classes that only
 * the warm-up's samples load (every endpoint's) must come from the cache, which shows that the
 * training run exercised them.
 */
class AotCacheIT {
  private static final Path APP = Path.of("server/target/quarkus-app");
  private static final Pattern LOADED = Pattern.compile("\\] (\\S+) source: (.+)$");
  /** Loaded by the warm-up's requests only (none at start-up), one or more per endpoint. */
  private static final List<String> TRAINED =
      List.of(
          "io.gpuadmission.admission.ReviewCodec",
          "io.gpuadmission.mutation.PodMutator",
          "io.gpuadmission.mutation.TopologyJobRule",
          "io.gpuadmission.mutation.TreeGenerator",
          "io.gpuadmission.admission.ValidationService",
          "io.gpuadmission.validation.WorkloadKind",
          "io.gpuadmission.extender.ExtenderArgsReader",
          "io.gpuadmission.extender.ExtenderAnswerWriter",
          "io.gpuadmission.placement.NodeScorer",
          "io.gpuadmission.placement.NodeRefusal",
          "io.fabric8.kubernetes.api.model.Pod",
          "io.fabric8.kubernetes.api.model.ResourceRequirements");

  @Test
  void serverStartsFromTheTrainedCacheWithEveryEndpointsClassesInIt(@TempDir Path tmp) throws Exception {
    var classLog = tmp.resolve("class-load.log");
    var port = freePort();
    var launcher = new ProcessBuilder(APP.resolve("run").toAbsolutePath().toString());
    launcher.environment().putAll(serverEnvironment(port));
    // Read by the java launcher before its own options: logs each class and where it came from.
    launcher.environment().put("JDK_JAVA_OPTIONS", "-Xlog:class+load=info:file=" + classLog);
    launcher.redirectErrorStream(true).redirectOutput(tmp.resolve("server.log").toFile());
    var server = launcher.start();
    try {
      var base = "https://127.0.0.1:" + port;
      await()
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(200))
          .ignoreExceptions() // refused until the listener is up
          .until(() -> !server.isAlive() || ready(base));
      assertThat(server.isAlive())
          .as("server (launcher with -XX:AOTMode=on) alive; its output:\n%s", Files.readString(tmp.resolve("server.log")))
          .isTrue();
      var review = Files.readAllBytes(Path.of("server/src/main/resources/warmup/gpu-topology.json"));
      given().relaxedHTTPSValidation().baseUri(base).contentType("application/json").body(review)
          .post("/mutate").then().statusCode(200);
    } finally {
      server.destroy();
      server.waitFor(30, TimeUnit.SECONDS);
    }

    var sources = sources(classLog);
    for (var name : TRAINED) {
      assertThat(sources).as("where %s was loaded from", name).containsEntry(name, "shared objects file");
    }
    var shared = sources.values().stream().filter("shared objects file"::equals).count();
    assertThat(shared).as("classes from the AOT cache, of %d loaded", sources.size()).isGreaterThan(sources.size() * 3L / 4);
  }

  @Test
  void aJvmStartedWithOtherOptionsRefusesTheCacheLoudly() throws Exception {
    var java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    var refused =
        run(java, "@jvm.args", "-XX:-UseCompactObjectHeaders", "-XX:AOTCache=app.aot", "-XX:AOTMode=on", "-cp", "quarkus-run.jar", "-version");
    var accepted = run(java, "@jvm.args", "-XX:AOTCache=app.aot", "-XX:AOTMode=on", "-cp", "quarkus-run.jar", "-version");

    assertThat(refused.exit()).isEqualTo(1);
    assertThat(refused.output()).contains("Unable to use AOT cache");
    assertThat(accepted.exit()).as(accepted.output()).isZero();
  }

  /**
   * target/quarkus-app moved elsewhere still starts from its cache ({@code -XX:AOTMode=on} would
   * stop it otherwise); a launcher whose JVM is gone says what to do instead of "not found".
   */
  @Test
  void theMovedDirectoryStillUsesItsCacheAndAGoneJvmIsExplained(@TempDir Path tmp) throws Exception {
    var moved = tmp.resolve("elsewhere");
    copyTree(APP, moved);

    var version = new ProcessBuilder(moved.resolve("run").toString(), "--version").directory(tmp.toFile()).redirectErrorStream(true).start();
    var versionOut = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(version.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(versionOut).isEqualTo("gpu-admission 0.1.0-SNAPSHOT\n");
    assertThat(version.exitValue()).isZero();

    var launcher = Files.readString(Path.of("server/src/main/jvm/run")).replace("@JAVA_HOME@", "/nonexistent/jdk-25");
    Files.writeString(moved.resolve("run"), launcher);
    var gone = new ProcessBuilder("sh", moved.resolve("run").toString(), "--version").redirectErrorStream(true).start();
    var goneOut = new String(gone.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(gone.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(gone.exitValue()).isEqualTo(1);
    assertThat(goneOut)
        .isEqualTo(
            "gpu-admission: /nonexistent/jdk-25/bin/java, the JVM that built this and trained its AOT cache, is not there any more;"
                + " rebuild with ./mvnw -B -DskipTests package (it finds a JDK 25) to run with another\n");
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (var files = Files.walk(from)) {
      for (var source : files.toList()) {
        // As cp -p would: times and modes kept (run stays executable).
        Files.copy(source, to.resolve(from.relativize(source).toString()), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
      }
    }
  }

  private static boolean ready(String base) {
    return given().relaxedHTTPSValidation().baseUri(base).get("/q/health/ready").statusCode() == 200;
  }

  private static Map<String, String> serverEnvironment(int port) {
    var env = new HashMap<String, String>();
    env.put("QUARKUS_HTTP_SSL_PORT", Integer.toString(port));
    env.put("GPU_ADMISSION_TLS_CERT", Path.of("certs/dev/tls.crt").toAbsolutePath().toString());
    env.put("GPU_ADMISSION_TLS_KEY", Path.of("certs/dev/tls.key").toAbsolutePath().toString());
    env.put("GPU_ADMISSION_TLS_SELF_MANAGED", "false");
    env.put("GPU_ADMISSION_CLUSTER_ENABLED", "false");
    return env;
  }

  /** Class name to where the JVM took it from ("shared objects file" is the AOT cache). */
  private static Map<String, String> sources(Path classLog) throws IOException {
    var sources = new HashMap<String, String>();
    for (var line : Files.readAllLines(classLog, StandardCharsets.UTF_8)) {
      var m = LOADED.matcher(line);
      if (m.find()) {
        sources.putIfAbsent(m.group(1), m.group(2).trim());
      }
    }
    return sources;
  }

  private record Outcome(int exit, String output) {}

  private static Outcome run(String... command) throws IOException, InterruptedException {
    var process = new ProcessBuilder(command).directory(APP.toFile()).redirectErrorStream(true).start();
    var output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Outcome(process.exitValue(), output);
  }

  private static int freePort() throws IOException {
    try (var socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
