package io.gpuadmission.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.testing.MockApiServer;
import io.gpuadmission.node.FakeDeviceManagerAccess;
import io.gpuadmission.node.HttpWatchProxy;
import io.gpuadmission.node.FakeKubelet;
import io.gpuadmission.node.podresources.v1.PodResources;
import io.gpuadmission.testing.Fixtures;
import io.gpuadmission.testing.PackagedApp;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The device plugin's calls as the kubelet makes them at each GPU container's start (not CI;
 * bench/device-plugin-calls.sh): the packaged jar in node-agent mode with the DaemonSet's JVM
 * options, pinned to one CPU, serving {@code aliyun.com/gpu} to a fake v1.32 device manager
 * ({@code FakeDeviceManager}: GetPreferredAllocation, then Allocate, per container, over the Unix
 * socket) on a full node: 110 pods in the agent's pod cache, 4 of the 8 GPUs held by running
 * pods. Each call is one pod asking 2 GPUs that bind chose among the 4 free ones (6 pairs in
 * turn): the answer must be exactly those GPUs. Beside them, on the same connection just before,
 * GetDevicePluginOptions (a constant answer): the cost of a gRPC round trip on this machine.
 *
 * <p>Prints p50/p99/max of each call, their ratios to the baseline's, wrong answers, and every
 * request the mock API server got while a pod's calls were under way (reads would be a round
 * trip on the path; the pod's gpu-assigned mark is written after the answer, off it). {@code -Dbench.jvm="..."}: JVM
 * options after the DaemonSet's (to compare).
 */
public final class DevicePluginCalls {
  private static final String NODE = NodeAgentFootprint.NODE;
  private static final String RESOURCE = "aliyun.com/gpu";
  private static final String[] GPU = NodeAgentFootprint.GPU;
  private static final int[][] FREE_PAIRS = {{4, 5}, {6, 7}, {4, 6}, {5, 7}, {4, 7}, {5, 6}};
  /** How long a new pod's watch event takes to reach the agent here, at most: the kubelet sees a bound pod no sooner. */
  private static final long POD_REACHES_NODE_MILLIS = 300;

  private DevicePluginCalls() {}

  public static void main(String... args) throws Exception {
    var status = 0;
    try {
      run(args.length > 0 ? Integer.parseInt(args[0]) : 300, args.length > 1 ? Integer.parseInt(args[1]) : 50);
    } catch (Exception e) {
      e.printStackTrace();
      status = 1;
    }
    // The mock API server's threads would keep this JVM up.
    System.exit(status);
  }

  private static void run(int pods, int warmUp) throws Exception {
    var jvm = NodeAgentFootprint.daemonSetOptions();
    System.out.println((PackagedApp.isNative() ? "native executable, options" : "JVM options") + " (from the DaemonSet): " + String.join(" ", jvm));
    var work = Files.createTempDirectory("device-plugin-bench");
    var plugins = Files.createDirectories(work.resolve("device-plugins"));
    java.util.logging.Logger.getLogger("io.fabric8.mockwebserver").setLevel(java.util.logging.Level.WARNING);
    var requests = new CopyOnWriteArrayList<long[]>();
    var described = new CopyOnWriteArrayList<String>();
    try (var api = MockApiServer.start(5, null); var podResources = FakeKubelet.start(Files.createDirectories(work.resolve("pod-resources")));
        var kubelet = new FakeDeviceManagerAccess(plugins); var admin = api.admin()) {
      api.answerInstead(request -> {
        requests.add(new long[] {System.nanoTime(), described.size()});
        described.add(request.getMethod() + " " + request.getPath());
        return null;
      });
      var others = fullNode(admin);
      var proxy = HttpWatchProxy.start(admin.getMasterUrl().toString(), NodeAgentFootprint.apiServerTls());
      var env = new HashMap<String, String>();
      env.put("QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", NodeAgentFootprint.apiServerUrl(proxy, admin.getMasterUrl().toString()));
      env.put("GPU_ADMISSION_NODE_AGENT_SERVICE_ACCOUNT", NodeAgentFootprint.serviceAccount(work).toString());
      env.put("GPU_ADMISSION_MODE", "node-agent");
      env.put("GPU_ADMISSION_NODE_AGENT_NODE_NAME", NODE);
      env.put("GPU_ADMISSION_NODE_AGENT_SOCKET", podResources.socket().toString());
      env.put("GPU_ADMISSION_NODE_AGENT_NVIDIA_GPUS", Fixtures.path("node/nvidia-gpus").toAbsolutePath().toString());
      env.put("GPU_ADMISSION_NODE_AGENT_HEALTH_PORT", "0");
      env.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_SERVE", "always");
      env.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_DIR", plugins.toString());
      env.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_PCI_DEVICES", work.resolve("no-sysfs").toString());
      env.put("MALLOC_ARENA_MAX", "1");
      try (proxy; var agent = NodeAgentFootprint.startAgent(work, env, jvm)) {
        var deadline = System.nanoTime() + 120_000_000_000L;
        while (kubelet.registrations() == 0 || kubelet.devices() != GPU.length) {
          if (!agent.alive() || System.nanoTime() > deadline) {
            throw new IllegalStateException("the agent's device plugin did not register:\n" + agent.stdout() + agent.stderr());
          }
          Thread.sleep(100);
        }
        // The running pods' GPUs (0-3), handed out by the plugin as at their own start.
        Thread.sleep(POD_REACHES_NODE_MILLIS);
        for (int i = 0; i < 4; i++) {
          kubelet.admit(admin.pods().inNamespace("default").withName("trainer-" + i).get());
        }
        podResources.answer(answer(others, kubelet));
        var wrong = new ArrayList<String>();
        var during = new ArrayList<String>();
        for (int i = 0; i < warmUp + pods; i++) {
          if (i == warmUp) {
            kubelet.clearTimings();
            during.clear();
            wrong.clear();
          }
          var pair = FREE_PAIRS[i % FREE_PAIRS.length];
          var pod = admin.resource(job("job-" + i, pair)).create();
          Thread.sleep(POD_REACHES_NODE_MILLIS);
          kubelet.options();
          var seen = described.size();
          var held = kubelet.admit(pod);
          described.stream().skip(seen).forEach(during::add);
          var expected = GPU[pair[0]] + "," + GPU[pair[1]];
          var visible = kubelet.visible("default/job-" + i, "main");
          if (!visible.equals(expected)) {
            wrong.add("job-" + i + " wanted GPUs " + pair[0] + "," + pair[1] + " got " + visible + " (held " + held + ")");
          }
          // The job ends: the kubelet frees its GPUs and the pod goes.
          kubelet.remove("default/job-" + i);
          admin.pods().inNamespace("default").withName("job-" + i).delete();
          podResources.answer(answer(others, kubelet));
        }
        if (!agent.alive()) {
          throw new IllegalStateException("the agent stopped:\n" + agent.stdout() + agent.stderr());
        }
        var baseline = stats(kubelet.timings("GetDevicePluginOptions"));
        var preferred = stats(kubelet.timings("GetPreferredAllocation"));
        var allocate = stats(kubelet.timings("Allocate"));
        System.out.printf("%d pods (after %d to warm up), each 2 GPUs: one GetPreferredAllocation and one Allocate each%n", pods, warmUp);
        System.out.println(baseline.line("GetDevicePluginOptions (baseline)", baseline));
        System.out.println(preferred.line("GetPreferredAllocation", baseline));
        System.out.println(allocate.line("Allocate", baseline));
        System.out.println("wrong GPUs: " + wrong.size() + (wrong.isEmpty() ? "" : "\n  " + String.join("\n  ", wrong)));
        var byKind = during.stream().collect(Collectors.groupingBy(r -> r.replaceAll("job-\\d+", "job-N").replaceAll("\\?.*", ""),
            java.util.TreeMap::new, Collectors.counting()));
        System.out.println("API server requests while a pod's calls were under way: " + during.size() + " " + byKind);
      }
    }
  }

  /** p50, p99 and max of one call, in milliseconds. */
  record Stats(int n, double p50, double p99, double max) {
    String line(String label, Stats baseline) {
      return String.format("%-34s n=%d p50=%.2f ms p99=%.2f ms max=%.2f ms  (x%.1f, x%.1f the baseline's p50, p99)", label, n, p50, p99, max,
          p50 / baseline.p50, p99 / baseline.p99);
    }
  }

  private static Stats stats(List<Long> nanos) {
    var sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
    return new Stats(sorted.length, percentile(sorted, 0.50), percentile(sorted, 0.99), sorted[sorted.length - 1] / 1e6);
  }

  /** The nearest-rank percentile, in milliseconds. */
  private static double percentile(long[] sorted, double p) {
    return sorted[Math.max(0, (int) Math.ceil(p * sorted.length) - 1)] / 1e6;
  }

  /** 110 pods bound to the node with the job to come: 105 without GPUs, 4 trainers holding GPUs 0-3; returns the PodResources of those without. */
  private static List<PodResources> fullNode(KubernetesClient admin) {
    var others = new ArrayList<PodResources>();
    for (int i = 0; i < 109; i++) {
      var trainer = i < 4;
      var name = trainer ? "trainer-" + i : "service-" + i;
      admin.resource(new PodBuilder().withNewMetadata().withName(name).withNamespace("default").withUid("uid-" + i)
          .addToAnnotations(trainer ? Map.of("gpu-admission.io/gpu-indices", Integer.toString(i)) : Map.of()).endMetadata()
          .withNewSpec().withNodeName(NODE).addNewContainer().withName("main").withImage("nvcr.io/nvidia/pytorch:24.08-py3")
          .withNewResources().addToLimits(trainer ? Map.of(RESOURCE, new Quantity("1")) : Map.of("cpu", new Quantity("1"))).endResources()
          .endContainer().endSpec().withNewStatus().withPhase("Running").endStatus().build()).create();
      if (!trainer) {
        others.add(FakeKubelet.pod("default", name, FakeKubelet.container("main")));
      }
    }
    return others;
  }

  /** A pod bind placed on GPUs {@code pair}, not yet started. */
  private static Pod job(String name, int[] pair) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace("default")
        .addToAnnotations("gpu-admission.io/gpu-indices", pair[0] + "," + pair[1]).endMetadata()
        .withNewSpec().withNodeName(NODE).addNewContainer().withName("main").withImage("nvcr.io/nvidia/pytorch:24.08-py3")
        .withNewResources().addToLimits(RESOURCE, new Quantity("2")).endResources().endContainer().endSpec()
        .withNewStatus().withPhase("Pending").endStatus().build();
  }

  private static PodResources[] answer(List<PodResources> others, FakeDeviceManagerAccess kubelet) {
    return Stream.concat(others.stream(), Arrays.stream(kubelet.podResources())).toArray(PodResources[]::new);
  }
}
