package io.gpuadmission.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.gpuadmission.testing.CountingApiServer;
import io.gpuadmission.testing.PackagedApp;
import java.util.List;
import java.util.stream.Stream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged node agent (target/node-agent: node-agent.jar and lib/) run as the DaemonSet runs
 * it, with a kubeconfig whose API server is a socket that counts connections; and its class path,
 * which holds no Quarkus, Vert.x or fabric8 by construction (its pom).
 */
class NodeAgentIT {
  @TempDir Path workingDirectory;
  private CountingApiServer apiServer;
  private AtomicInteger apiConnections;
  private Map<String, String> env;

  @BeforeEach
  void fakeApiServer() throws IOException {
    apiServer = CountingApiServer.start(workingDirectory);
    apiConnections = apiServer.connections();
    env = new HashMap<>();
    env.put("KUBECONFIG", apiServer.kubeconfig().toString());
  }

  @AfterEach
  void close() throws IOException {
    apiServer.close();
  }

  @Test
  void itsClassPathHoldsNoQuarkusVertxOrFabric8() throws IOException {
    var lib = PackagedApp.JAR.resolveSibling("lib");
    List<String> jars;
    try (Stream<java.nio.file.Path> files = Files.list(lib)) {
      jars = files.map(f -> f.getFileName().toString()).sorted().toList();
    }
    assertThat(jars).contains("gpu-admission-allocator-0.1.0-SNAPSHOT.jar", "jackson-databind-2.20.1.jar")
        .anyMatch(j -> j.startsWith("protobuf-java-"))
        .noneMatch(j -> j.startsWith("quarkus-") || j.startsWith("vertx-") || j.startsWith("kubernetes-") || j.contains("fabric8"));
    var manifest = new java.util.jar.JarFile(PackagedApp.JAR.toFile()).getManifest().getMainAttributes();
    assertThat(manifest.getValue("Main-Class")).isEqualTo("io.gpuadmission.node.NodeAgentLauncher");
    assertThat(manifest.getValue("Class-Path").split(" ")).containsExactlyInAnyOrderElementsOf(jars.stream().map(j -> "lib/" + j).toList());
  }

  /**
   * The node agent, against a mock API server that records every request and a kubelet socket that
   * is not there: the health listener is its only one, and its only calls watch its node's pods
   * (no server informer, no election).
   */
  @Test
  void theNodeAgentModeWatchesOnlyItsNodesPodsAndListensOnlyForHealth() throws Exception {
    var requests = new java.util.concurrent.CopyOnWriteArrayList<String>();
    try (var cluster = io.gpuadmission.testing.MockApiServer.start(1, null); var health = new java.net.ServerSocket(0)) {
      cluster.answerInstead(request -> {
        requests.add(request.getMethod() + " " + request.getPath());
        return null;
      });
      String apiServer;
      try (var admin = cluster.admin()) {
        apiServer = admin.getMasterUrl().toString();
      }
      var port = health.getLocalPort();
      health.close();
      // The agent's own client, as kube-apiserver serves watches (a streamed body; the mock serves WebSocket only).
      var proxy = HttpWatchProxy.start(apiServer);
      env.put("QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", proxy.url());
      env.put("GPU_ADMISSION_NODE_AGENT_NODE_NAME", "cn-beijing.i-topo-v100-a");
      env.put("GPU_ADMISSION_NODE_AGENT_SOCKET", workingDirectory.resolve("no-kubelet/kubelet.sock").toString());
      env.put("GPU_ADMISSION_NODE_AGENT_HEALTH_PORT", Integer.toString(port));
      var loaded = workingDirectory.resolve("agent-classes.log");
      if (!PackagedApp.isNative()) {
        env.put("JAVA_TOOL_OPTIONS", "-Xlog:class+load=info:file=" + loaded);
      }
      try (proxy; var agent = PackagedApp.start(workingDirectory, env)) {
        await().atMost(Duration.ofSeconds(60)).until(() -> agent.stdout().contains(" started in ") || !agent.alive());
        assertThat(agent.stdout()).contains("gpu-admission node agent started in ")
            .contains("(node-agent mode: no Quarkus, no webhook listener, no server informers, no leader election)");
        // Quarkus never started: none of its start-up lines.
        assertThat(agent.stdout()).doesNotContain("Listening on: http").doesNotContain("Installed features").doesNotContain("Profile prod");
        var http = java.net.http.HttpClient.newHttpClient();
        java.util.function.Function<String, Integer> status = path -> {
          try {
            return http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + path)).build(),
                java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
          } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
          }
        };
        await().atMost(Duration.ofSeconds(20)).until(() -> requests.stream().anyMatch(r -> r.contains("watch=true")));
        assertThat(status.apply("/q/health/live")).isEqualTo(200);
        // No kubelet: not ready, as a pod whose socket is not mounted shows in kubectl.
        assertThat(status.apply("/q/health/ready")).isEqualTo(503);
        assertThat(status.apply("/mutate")).isEqualTo(404);
        assertThat(status.apply("/extender/inspect")).isEqualTo(404);
        // The agent's first round runs on its own timer after the watch starts: wait for its line.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(agent.stdout()).contains("the kubelet's PodResources API at "
            + workingDirectory.resolve("no-kubelet/kubelet.sock")
            + " does not answer (no socket: the kubelet is restarting, or its pod-resources directory is not mounted)"));
        // Its own node's pods; its own Node (the device plugin serves topology nodes only); and,
        // on a topology node, its own node's unhealthy-GPU ConfigMap. Nothing of other nodes.
        assertThat(requests).isNotEmpty().anyMatch(r -> r.startsWith("GET /api/v1/pods?")).allSatisfy(r -> assertThat(r).satisfiesAnyOf(
            own -> assertThat(own).startsWith("GET /api/v1/pods?").contains("fieldSelector=spec.nodeName%3Dcn-beijing.i-topo-v100-a"),
            own -> assertThat(own).isEqualTo("GET /api/v1/nodes/cn-beijing.i-topo-v100-a"),
            own -> assertThat(own).startsWith("GET /api/v1/namespaces/kube-system/configmaps?").contains("unhealthy-gpu-cn-beijing.i-topo-v100-a")));
        assertThat(agent.alive()).isTrue();
        // The kubelet through grpc-java on Netty, the API server through the JDK's HTTP client; none
        // of the server's parts (fabric8's client or model, Vert.x, Quarkus' runtime) is loaded in
        // node-agent mode, nor a zip file system over the jar.
        if (PackagedApp.isNative()) {
          // A native executable loads no class: what it can run was fixed when it was built, and it
          // keeps the name of every class compiled in (for stack traces and reflection).
          var image = new String(Files.readAllBytes(PackagedApp.EXECUTABLE.orElseThrow()), java.nio.charset.StandardCharsets.ISO_8859_1);
          assertThat(image).contains("io.grpc.netty.NettyChannelBuilder").contains("java.net.http.HttpClient")
              .doesNotContain("io.fabric8.").doesNotContain("io.vertx.").doesNotContain("io.quarkus.runtime.Application")
              .doesNotContain("io.quarkus.arc.");
        } else {
          var classes = Files.readAllLines(loaded);
          assertThat(classes).anyMatch(line -> line.contains(" io.grpc.netty.NettyChannelBuilder "))
              .anyMatch(line -> line.contains(" java.net.http.HttpClient "))
              .noneMatch(line -> line.contains(" io.fabric8.") || line.contains(" io.vertx.") || line.contains(" io.quarkus.runtime.Application ")
                  || line.contains(" io.quarkus.arc.") || line.contains(" jdk.nio.zipfs."));
        }
      }
    }
  }

  /** A node agent with a setting it cannot use stops at once, saying which setting in one line (no stack trace). */
  @Test
  void theNodeAgentWithABadSettingStopsSayingWhich() {
    env.put("GPU_ADMISSION_NODE_AGENT_NODE_NAME", "cn-beijing.i-topo-v100-a");
    env.put("GPU_ADMISSION_NODE_AGENT_PERIOD", "often");

    var run = PackagedApp.run(workingDirectory, env);

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.stdout()).contains("node agent not started: ").contains("gpu-admission.node-agent.period").contains("\"often\"")
        .contains("Text cannot be parsed to a Duration").doesNotContain("\tat ").doesNotContain("java.lang.").doesNotContain("SRCFG");
    assertThat(apiConnections).hasValue(0);
  }

  @Test
  void theNodeAgentWithoutItsNodesNameStopsSayingHowTheDaemonSetSetsIt() {

    var run = PackagedApp.run(workingDirectory, env);

    assertThat(run.exitCode()).isEqualTo(1);
    assertThat(run.stdout()).contains("node agent not started: gpu-admission.node-agent.node-name is not set: the DaemonSet passes the node's"
        + " name as GPU_ADMISSION_NODE_AGENT_NODE_NAME (fieldRef spec.nodeName)").doesNotContain("\tat ");
    assertThat(apiConnections).hasValue(0);
  }
}
