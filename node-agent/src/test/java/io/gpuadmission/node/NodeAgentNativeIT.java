package io.gpuadmission.node;

import static io.gpuadmission.node.FakeKubelet.container;
import static io.gpuadmission.node.FakeKubelet.devices;
import static io.gpuadmission.node.FakeKubelet.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.testing.DevCertificates;
import io.gpuadmission.testing.Fixtures;
import io.gpuadmission.testing.MockApiServer;
import io.gpuadmission.testing.PackagedApp;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged node agent's program on a topology node, as its DaemonSet runs it, against the
 * kubelet's two APIs (a fake kubelet's PodResources, the fake v1.32 device manager, both grpc-java
 * on Unix sockets) and the API server over HTTPS, checked against the service account's CA: the
 * device plugin registers, serves bind's GPUs to GetPreferredAllocation and Allocate, the
 * container's devices are recorded on its pod, and SIGTERM stops it cleanly. Run by the native
 * build (profile native) against target/node-agent-runner: everything the agent does through
 * reflection, resources, JNI (Netty's epoll) and its settings' generated classes happens here.
 */
class NodeAgentNativeIT {
  private static final String NODE = "cn-beijing.i-topo-v100-a";
  private static final String[] GPU = NodeAgentTest.GPU;
  private static final Duration WITHIN = Duration.ofSeconds(60);

  @TempDir Path work;

  @Test
  void servesBindsGpusToTheKubeletRecordsWhatTheContainerGotAndStopsOnSigterm() throws Exception {
    var plugins = Files.createDirectories(work.resolve("device-plugins"));
    var http = HttpClient.newHttpClient();
    try (var api = MockApiServer.start(4, null); var admin = api.admin();
        var podResources = FakeKubelet.start(Files.createDirectories(work.resolve("pod-resources")));
        var deviceManager = new FakeDeviceManager(plugins, "aliyun.com/gpu");
        var proxy = HttpWatchProxy.start(admin.getMasterUrl().toString(), DevCertificates.serving())) {
      var health = freePort();
      var env = new HashMap<String, String>();
      env.put("QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", proxy.url());
      env.put("GPU_ADMISSION_NODE_AGENT_SERVICE_ACCOUNT", serviceAccount().toString());
      env.put("GPU_ADMISSION_NODE_AGENT_NODE_NAME", NODE);
      env.put("GPU_ADMISSION_NODE_AGENT_SOCKET", podResources.socket().toString());
      env.put("GPU_ADMISSION_NODE_AGENT_NVIDIA_GPUS", Fixtures.path("node/nvidia-gpus").toAbsolutePath().toString());
      env.put("GPU_ADMISSION_NODE_AGENT_HEALTH_PORT", Integer.toString(health));
      env.put("GPU_ADMISSION_NODE_AGENT_PERIOD", "1s");
      env.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_DIR", plugins.toString());
      env.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_PCI_DEVICES", work.resolve("no-sysfs").toString());
      var agent = PackagedApp.start(work, env);
      try {
        // The default serve mode, topology-nodes: the agent reads its own Node (labelled topology)
        // and only then registers; ListAndWatch then lists the driver table's eight GPUs.
        await().atMost(WITHIN).until(() -> !agent.alive() || deviceManager.registrations().size() == 1 && deviceManager.devices().size() == 8);
        assertThat(agent.alive()).as("agent output:%n%s%s", agent.stdout(), agent.stderr()).isTrue();
        // Its resource, its socket, and GetPreferredAllocation offered (how bind's choice reaches the kubelet).
        assertThat(deviceManager.registrations()).containsExactly("aliyun.com/gpu gpu-admission-aliyun.com-gpu.sock preferred=true");
        assertThat(deviceManager.devices()).extracting(d -> d.getID()).containsExactlyInAnyOrder(GPU);

        // Bind chose GPUs 4 and 5 of the eight; the kubelet admits the pod once the agent has seen it.
        var pod = admin.resource(new PodBuilder().withNewMetadata().withName("trainer").withNamespace("default").withUid("uid-trainer")
            .addToAnnotations("gpu-admission.io/gpu-indices", "4,5").endMetadata()
            .withNewSpec().withNodeName(NODE).addNewContainer().withName("main").withImage("nvcr.io/nvidia/pytorch:24.08-py3")
            .withNewResources().addToLimits("aliyun.com/gpu", new Quantity("2")).endResources().endContainer().endSpec()
            .withNewStatus().withPhase("Pending").endStatus().build()).create();
        Thread.sleep(1000); // its watch event reaches the agent; the kubelet sees a bound pod no sooner
        var held = deviceManager.admit(pod);

        assertThat(deviceManager.calls).containsExactly("GetPreferredAllocation main 2", "Allocate main 2");
        assertThat(held.get("main")).containsExactlyInAnyOrder(GPU[4], GPU[5]);
        assertThat(deviceManager.response("default/trainer", "main").getEnvsOrThrow("NVIDIA_VISIBLE_DEVICES"))
            .isEqualTo(GPU[4] + "," + GPU[5]);

        // PodResources reports the container's devices: the agent records their indices on the pod.
        podResources.answer(pod("default", "trainer", container("main", devices("aliyun.com/gpu", GPU[5], GPU[4]))));
        await().atMost(WITHIN).untilAsserted(() -> assertThat(admin.pods().inNamespace("default").withName("trainer").get()
            .getMetadata().getAnnotations()).containsEntry("gpu-admission.io/gpu-allocated", "4,5"));

        assertThat(probe(http, health, "/q/health/started")).startsWith("200 ").contains("\"node\":\"" + NODE + "\"");
        assertThat(probe(http, health, "/q/health/live")).startsWith("200 ");
        await().atMost(WITHIN).untilAsserted(() -> assertThat(probe(http, health, "/q/health/ready"))
            .startsWith("200 ").contains("\"kubeletAnswered\":true").contains("\"podsListed\":true"));
        assertThat(probe(http, health, "/mutate")).startsWith("404 ");
      } finally {
        agent.close();
      }
      // SIGTERM runs the shutdown hook, which closes the plugin: its socket goes, so the kubelet
      // sees the resource leave at once instead of at its next failed call.
      assertThat(agent.exitValue()).as("exit status after SIGTERM; output:%n%s%s", agent.stdout(), agent.stderr()).isEqualTo(143);
      assertThat(plugins.resolve("gpu-admission-aliyun.com-gpu.sock")).doesNotExist();
      assertThat(agent.stdout() + agent.stderr()).doesNotContain("Exception").doesNotContain("\tat ").doesNotContain("ERROR");
    }
  }

  private Path serviceAccount() throws java.io.IOException {
    var dir = Files.createDirectories(work.resolve("serviceaccount"));
    Files.copy(DevCertificates.DIR.resolve("ca.crt"), dir.resolve("ca.crt"));
    Files.writeString(dir.resolve("token"), "test-token");
    return dir;
  }

  private static String probe(HttpClient http, int port, String path) {
    try {
      var answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(3)).build(),
          HttpResponse.BodyHandlers.ofString());
      return answer.statusCode() + " " + answer.body();
    } catch (java.io.IOException e) {
      return "no answer: " + e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }

  private static int freePort() throws java.io.IOException {
    try (var socket = new java.net.ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

}
