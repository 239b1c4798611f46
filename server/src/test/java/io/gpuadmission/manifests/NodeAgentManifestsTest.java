package io.gpuadmission.manifests;

import io.gpuadmission.manifests.Overlays.Renderer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import static io.gpuadmission.manifests.RenderedObjects.env;
import static io.gpuadmission.manifests.RenderedObjects.find;
import static io.gpuadmission.node.FakeKubelet.container;
import static io.gpuadmission.node.FakeKubelet.devices;
import static io.gpuadmission.node.FakeKubelet.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.testing.MockApiServer;
import io.gpuadmission.node.DeviceIndex;
import io.gpuadmission.node.FakeKubelet;
import io.gpuadmission.node.NodeAgent;
import io.gpuadmission.node.NodeAgentConfig;
import io.gpuadmission.node.PodResourcesClient;
import io.gpuadmission.support.Fixtures;
import io.smallrye.config.WithDefault;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The node agent's component (manifests/node-agent): a DaemonSet on GPU nodes with the kubelet's
 * pod-resources directory read-only, as close to Pod Security "restricted" as a hostPath allows,
 * and RBAC that is exactly what the agent asks of the API server.
 */
class NodeAgentManifestsTest {
  private static final String NAMESPACE = "gpu-admission-node";
  private static final String AGENT = "gpu-admission-node-agent";

  private static DaemonSet daemonSet(List<io.fabric8.kubernetes.api.model.HasMetadata> objects) {
    return (DaemonSet) find(objects, "DaemonSet", NAMESPACE, AGENT);
  }

  private static String defaultOf(String setting) throws NoSuchMethodException {
    return NodeAgentConfig.class.getMethod(setting).getAnnotation(WithDefault.class).value();
  }

  private static String defaultOfPlugin(String setting) throws NoSuchMethodException {
    return NodeAgentConfig.DevicePluginConfig.class.getMethod(setting).getAnnotation(WithDefault.class).value();
  }

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void daemonSetRunsTheAgentOnGpuNodesWithThePodResourcesDirectoryReadOnly(Renderer renderer) throws Exception {
    var objects = renderer.objects("manifests/node-agent");
    var pod = daemonSet(objects).getSpec().getTemplate().getSpec();
    var container = pod.getContainers().get(0);

    // Its own program, not the server's artifact in a mode.
    assertThat(container.getCommand()).containsExactly("sh", "-c", "exec java $JAVA_OPTS_APPEND -jar /deployments/node-agent/node-agent.jar");
    assertThat(env(container, "GPU_ADMISSION_MODE")).isNull();
    assertThat(container.getEnv()).filteredOn(e -> e.getName().equals("GPU_ADMISSION_NODE_AGENT_NODE_NAME"))
        .singleElement().satisfies(e -> assertThat(e.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("spec.nodeName"));
    var socketDir = Path.of(defaultOf("socket")).getParent().toString();
    var volume = pod.getVolumes().stream().filter(v -> v.getHostPath() != null && v.getName().equals("pod-resources")).toList();
    assertThat(volume).singleElement().satisfies(v -> {
      assertThat(v.getHostPath().getPath()).isEqualTo(socketDir);
      assertThat(v.getHostPath().getType()).isEqualTo("Directory");
      assertThat(container.getVolumeMounts()).filteredOn(m -> m.getName().equals(v.getName())).singleElement().satisfies(m -> {
        assertThat(m.getMountPath()).isEqualTo(socketDir);
        assertThat(m.getReadOnly()).isTrue();
      });
    });
    // The device plugin's directory (its socket and the kubelet's registration socket), writable.
    var plugins = pod.getVolumes().stream().filter(v -> v.getHostPath() != null && v.getName().equals("device-plugins")).toList();
    assertThat(plugins).singleElement().satisfies(v -> {
      assertThat(v.getHostPath().getPath()).isEqualTo(defaultOfPlugin("dir"));
      assertThat(container.getVolumeMounts()).filteredOn(m -> m.getName().equals(v.getName())).singleElement().satisfies(m -> {
        assertThat(m.getMountPath()).isEqualTo(defaultOfPlugin("dir"));
        assertThat(m.getReadOnly()).isNotEqualTo(Boolean.TRUE);
      });
    });
    // The driver's GPU table is read from the container's own /proc, which shows the host's.
    assertThat(defaultOf("nvidiaGpus")).isEqualTo("/proc/driver/nvidia/gpus");
    assertThat(pod.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution().getNodeSelectorTerms())
        .extracting(t -> t.getMatchExpressions().get(0).getKey())
        .containsExactly("aliyun.accelerator/nvidia_count", "nvidia.com/gpu.present");
    assertThat(pod.getTolerations()).singleElement().satisfies(t -> assertThat(t.getOperator()).isEqualTo("Exists"));
    assertThat(Boolean.TRUE.equals(pod.getHostNetwork()) || Boolean.TRUE.equals(pod.getHostPID())).isFalse();
    // Health only, on the port the probes call.
    assertThat(container.getPorts()).extracting(p -> p.getName() + " " + p.getContainerPort()).containsExactly("health " + defaultOf("healthPort"));
    for (var probe : List.of(container.getStartupProbe(), container.getReadinessProbe(), container.getLivenessProbe())) {
      assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("health");
      assertThat(probe.getHttpGet().getPath()).startsWith("/q/health/");
    }
    var binding = (ClusterRoleBinding) find(objects, "ClusterRoleBinding", null, AGENT);
    assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
      assertThat(s.getName()).isEqualTo(pod.getServiceAccountName());
      assertThat(s.getNamespace()).isEqualTo(NAMESPACE);
    });
  }

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void agentBreaksRestrictedOnlyByTheHostPathAndTheSocketsOwnerInANamespaceThatAdmitsThat(Renderer renderer) throws Exception {
    var objects = renderer.objects("manifests/node-agent");
    var namespace = (Namespace) find(objects, "Namespace", null, NAMESPACE);
    var pod = daemonSet(objects).getSpec().getTemplate().getSpec();

    // gpu-admission enforces restricted; a hostPath needs privileged (baseline refuses it too).
    assertThat(((Namespace) find(objects, "Namespace", null, "gpu-admission")).getMetadata().getLabels())
        .containsEntry("pod-security.kubernetes.io/enforce", "restricted");
    assertThat(namespace.getMetadata().getLabels())
        .containsEntry("pod-security.kubernetes.io/enforce", "privileged")
        .doesNotContainKey("pod-security.kubernetes.io/warn");
    assertThat(RestrictedProfile.violations(pod)).containsExactly(
        "spec.volumes[pod-resources].hostPath",
        "spec.volumes[pod-resources]: type not allowed by restricted",
        "spec.volumes[device-plugins].hostPath",
        "spec.volumes[device-plugins]: type not allowed by restricted",
        "spec.securityContext.runAsUser: 0",
        "containers[node-agent].securityContext.runAsNonRoot must be true (here or for the pod)");
    var context = pod.getContainers().get(0).getSecurityContext();
    assertThat(context.getReadOnlyRootFilesystem()).isTrue();
    assertThat(context.getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(context.getCapabilities().getAdd()).isEmpty();
    // Nothing else of the install lives in the agent's namespace.
    assertThat(objects).filteredOn(o -> NAMESPACE.equals(o.getMetadata().getNamespace()))
        .extracting(o -> o.getKind() + " " + o.getMetadata().getName())
        .containsExactlyInAnyOrder("ServiceAccount " + AGENT, "DaemonSet " + AGENT);
  }

  /**
   * Least privilege as for the service (LeastPrivilegeTest): the agent runs against the mock API
   * server through every call it makes (watching its node's pods, a record, an Event on a pod whose
   * node overrode the choice); every request is recorded and must be what the component's RBAC
   * allows, and every grant must be used.
   */
  @Test
  void rbacGrantsExactlyTheRequestsTheAgentMakes(@TempDir Path dir) throws Exception {
    var calls = new CopyOnWriteArrayList<ApiCall>();
    var recording = new AtomicBoolean(true);
    try (var api = MockApiServer.start(5, null);
        var admin = api.admin();
        var kubelet = FakeKubelet.start(dir);
        var podResources = new PodResourcesClient(kubelet.socket(), Duration.ofSeconds(2));
        var proxy = io.gpuadmission.node.HttpWatchProxy.start(admin.getMasterUrl().toString());
        var client = io.gpuadmission.node.api.ApiServer.at(proxy.url(), dir.resolve("no-service-account"), false, Duration.ofSeconds(5))) {
      admin.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.agentPath("node/pod-bert-worker-0.yaml")), Pod.class)).create();
      api.answerInstead(request -> {
        if (recording.get()) {
          ApiCall.of(request.getMethod(), request.getPath()).ifPresent(calls::add);
        }
        return null;
      });
      kubelet.answer(pod("ml-team-a", "bert-worker-0", container("pytorch", devices("aliyun.com/gpu",
          "GPU-8d2e4f61-0a3b-4c5d-8e7f-1a2b3c4d5e6f", "GPU-c4b5a697-8870-4f61-b2a3-d4c5e6f70819"))));
      // With the device plugin: it reads its node's label once and watches the unhealthy-GPU ConfigMap.
      java.nio.file.Files.createDirectories(dir.resolve("device-plugins"));
      try (var deviceManager = new io.gpuadmission.node.FakeDeviceManagerAccess(dir.resolve("device-plugins"));
          var agent = NodeAgent.create(client, podResources, DeviceIndex.fromDriver(Fixtures.agentPath("node/nvidia-gpus"), Clock.systemUTC()),
              new NodeAgent.Settings("cn-beijing.i-topo-v100-a", Set.of("aliyun.com/gpu"), Duration.ofSeconds(5),
                  Optional.of(deviceManager.pluginSettings(Fixtures.agentPath("node/nvidia-gpus")))), Clock.systemUTC())) {
        io.gpuadmission.node.DevicePlugin.topologyNode(client, "cn-beijing.i-topo-v100-a");
        await().atMost(Duration.ofSeconds(20)).until(agent::podsSynced);
        await().atMost(Duration.ofSeconds(60)).until(() -> {
          agent.round();
          return calls.stream().anyMatch(c -> c.verb().equals("create")) && calls.stream().anyMatch(c -> c.verb().equals("patch"));
        });
        await().atMost(Duration.ofSeconds(20)).until(() -> calls.stream().filter(c -> c.verb().equals("watch")).count() >= 2);
      }
      recording.set(false);
      // A call is recorded as it arrives, before the mock server has stored what it creates.
      await().atMost(Duration.ofSeconds(20)).until(() -> !admin.v1().events().inNamespace("ml-team-a").list().getItems().isEmpty());
      assertThat(admin.v1().events().inNamespace("ml-team-a").list().getItems()).hasSize(1);
    }
    assertThat(new TreeSet<>(calls.stream().map(ApiCall::toString).toList()))
        .containsExactly("create events in ml-team-a", "get nodes named cn-beijing.i-topo-v100-a", "list configmaps in kube-system named unhealthy-gpu-cn-beijing.i-topo-v100-a",
            "list pods", "patch pods in ml-team-a named bert-worker-0", "watch configmaps in kube-system named unhealthy-gpu-cn-beijing.i-topo-v100-a", "watch pods");
    // The same calls against the RBAC of both installs: kubectl apply -k and the Helm chart.
    for (var renderer : Renderer.values()) {
      var grants = RbacGrant.of(renderer.objects("manifests/node-agent"), NAMESPACE, AGENT);
      var missing = new TreeSet<String>();
      calls.stream().filter(c -> grants.stream().noneMatch(g -> g.allows(c))).forEach(c -> missing.add(c.toString()));
      var unused = new TreeSet<String>();
      grants.stream().filter(g -> calls.stream().noneMatch(g::allows)).forEach(g -> unused.add(g.toString()));
      assertThat(missing).as("%s: requests the agent makes that RBAC refuses", renderer).isEmpty();
      assertThat(unused).as("%s: grants no request of the agent uses", renderer).isEmpty();
    }
  }

  /**
   * The DaemonSet's JVM options (JAVA_OPTS_APPEND) start this JDK, with the JIT and the JDK's CDS
   * archive as they say: an option the JVM refuses would stop the agent at every start.
   */
  @Test
  void theAgentsJvmOptionsStartThisJdkAsTheySay() throws Exception {
    var command = new java.util.ArrayList<String>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(io.gpuadmission.bench.NodeAgentFootprint.daemonSetJvmOptions());
    command.add("-version");
    var process = new ProcessBuilder(command).redirectErrorStream(true).start();
    var out = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(process.waitFor()).as(out).isZero();
    assertThat(out).contains("mixed mode").contains("sharing").doesNotContain("WARNING");
  }
}
