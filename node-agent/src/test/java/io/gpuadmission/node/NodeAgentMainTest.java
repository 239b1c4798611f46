package io.gpuadmission.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.smallrye.config.PropertiesConfigSource;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Node-agent mode's settings read without Quarkus: the same names, defaults and value forms as
 * {@link NodeAgentConfig} has in server mode's configuration, and a clear refusal of what it
 * cannot use. (The packaged jar started this way: RunModeIT.)
 */
class NodeAgentMainTest {
  private static NodeAgentConfig read(Map<String, String> properties) {
    return NodeAgentMain.config(List.of(new PropertiesConfigSource(properties, "test", 500))).getConfigMapping(NodeAgentConfig.class);
  }

  @Test
  void aFailedStartSaysWhyNotOnlyWhichRequestFailed() {
    var refused = new io.fabric8.kubernetes.client.KubernetesClientException(
        "Operation: [get]  for kind: [Node]  with name: [gpu-7]  in namespace: [null]  failed.",
        new java.io.IOException("Failed to connect to /127.0.0.1:8729", new java.net.ConnectException("Connection refused")));

    org.assertj.core.api.Assertions.assertThat(NodeAgentMain.reason(refused))
        .isEqualTo("Operation: [get] for kind: [Node] with name: [gpu-7] failed: Connection refused");
    org.assertj.core.api.Assertions.assertThat(NodeAgentMain.reason(new IllegalStateException("no node name"))).isEqualTo("no node name");
  }

  @Test
  void theDefaultsAreTheConfigMappings() {
    var config = read(Map.of());

    assertThat(config.nodeName()).isEmpty();
    assertThat(config.socket()).isEqualTo(Path.of("/var/lib/kubelet/pod-resources/kubelet.sock"));
    assertThat(config.period()).isEqualTo(Duration.ofSeconds(5));
    assertThat(config.callTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(config.healthPort()).isEqualTo(8080);
    assertThat(config.resources()).containsExactly("nvidia.com/gpu", "aliyun.com/gpu");
    assertThat(config.devicePlugin().serve()).isEqualTo(NodeAgentConfig.DevicePluginConfig.Serve.TOPOLOGY_NODES);
    assertThat(config.devicePlugin().handover()).isEqualTo(DevicePluginServer.Handover.ENV);
    assertThat(config.devicePlugin().topologyFile()).isEmpty();
  }

  @Test
  void settingsAreWrittenAsInServerMode() {
    var config = read(Map.of(
        "gpu-admission.node-agent.node-name", "cn-beijing.i-topo-v100-a",
        "gpu-admission.node-agent.period", "500ms",
        "gpu-admission.node-agent.call-timeout", "PT2S",
        "gpu-admission.node-agent.resources", "aliyun.com/gpu",
        "gpu-admission.node-agent.device-plugin.serve", "always",
        "gpu-admission.node-agent.device-plugin.handover", "cdi",
        "gpu-admission.node-agent.device-plugin.topology-file", "/etc/gpu-admission/topo.txt"));

    assertThat(config.nodeName()).contains("cn-beijing.i-topo-v100-a");
    assertThat(config.period()).isEqualTo(Duration.ofMillis(500));
    assertThat(config.callTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(config.resources()).containsExactly("aliyun.com/gpu");
    assertThat(config.devicePlugin().serve()).isEqualTo(NodeAgentConfig.DevicePluginConfig.Serve.ALWAYS);
    assertThat(config.devicePlugin().handover()).isEqualTo(DevicePluginServer.Handover.CDI);
    assertThat(config.devicePlugin().topologyFile()).contains(Path.of("/etc/gpu-admission/topo.txt"));
  }

  @Test
  void aValueItCannotReadIsRefusedNamingTheSetting() {
    assertThatThrownBy(() -> read(Map.of("gpu-admission.node-agent.period", "often")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gpu-admission.node-agent.period").hasMessageContaining("often");
    assertThatThrownBy(() -> read(Map.of("gpu-admission.node-agent.device-plugin.serve", "sometimes")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gpu-admission.node-agent.device-plugin.serve")
        .hasMessageContaining("sometimes");
  }

  @Test
  void withoutItsNodesNameItDoesNotStartAndSaysHowTheDaemonSetSetsIt() {
    var config = NodeAgentMain.config(List.of());

    assertThatThrownBy(() -> NodeAgentMain.start(config)).isInstanceOf(IllegalStateException.class)
        .hasMessage("gpu-admission.node-agent.node-name is not set: the DaemonSet passes the node's name as"
            + " GPU_ADMISSION_NODE_AGENT_NODE_NAME (fieldRef spec.nodeName)");
  }

  /**
   * An API server that refuses connections at the start (the agent started during an outage) is
   * waited for, not a reason to exit: the agent runs, unready, asking for its Node with growing
   * pauses (a line each), and once the API server answers it serves the device plugin of a
   * topology node and lists its pods.
   */
  @Test
  void anApiServerAwayAtStartIsWaitedForAndThePluginServedOnceItsNodeIsRead(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    var free = new java.net.ServerSocket(0);
    var port = free.getLocalPort();
    free.close();
    java.nio.file.Files.createDirectories(dir.resolve("gpus"));
    java.nio.file.Files.createDirectories(dir.resolve("device-plugins"));
    var config = NodeAgentMain.config(List.of(new PropertiesConfigSource(Map.of(
        "gpu-admission.node-agent.node-name", "gpu-1",
        "quarkus.kubernetes-client.api-server-url", "http://127.0.0.1:" + port,
        "gpu-admission.node-agent.socket", dir.resolve("kubelet.sock").toString(),
        "gpu-admission.node-agent.nvidia-gpus", dir.resolve("gpus").toString(),
        "gpu-admission.node-agent.health-port", "0",
        "gpu-admission.node-agent.device-plugin.dir", dir.resolve("device-plugins").toString()), "test", 500)));
    HttpServer api = null;
    try (var log = io.gpuadmission.testing.LogCapture.of(TopologyNodeCheck.class, true); var agent = NodeAgentMain.start(config)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> log.records().size() >= 2);
      assertThat(agent.ready()).isFalse();
      assertThat(agent.agent().plugin()).isEmpty();
      var said = log.records().stream().map(io.gpuadmission.testing.LogCapture::text).toList();
      assertThat(said.get(0)).startsWith("cannot read Node gpu-1: ").contains("connection refused")
          .endsWith("; asking again in 800 ms (the device plugin waits for it; the pods' records for the pod list)");
      assertThat(said.get(1)).endsWith("; asking again in 1600 ms (the device plugin waits for it; the pods' records for the pod list)");

      api = HttpServer.create(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), port), 10);
      api.createContext("/", exchange -> {
        var path = exchange.getRequestURI().getPath();
        var query = String.valueOf(exchange.getRequestURI().getQuery());
        var body = path.equals("/api/v1/nodes/gpu-1")
            ? "{\"kind\":\"Node\",\"metadata\":{\"name\":\"gpu-1\",\"labels\":{\"ack.node.gpu.schedule\":\"topology\"}}}"
            : query.contains("watch=true") ? "" : "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[]}";
        var bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, bytes.length == 0 ? -1 : bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
      });
      api.start();

      await().atMost(Duration.ofSeconds(60)).until(() -> agent.agent().plugin().isPresent() && agent.agent().podsSynced());
      assertThat(log.records()).extracting(io.gpuadmission.testing.LogCapture::text)
          .last().isEqualTo("Node gpu-1 read: a topology node, the device plugin is served");
    } finally {
      if (api != null) {
        api.stop(0);
      }
    }
  }
}
