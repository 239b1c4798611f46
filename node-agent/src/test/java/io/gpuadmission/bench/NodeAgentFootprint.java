package io.gpuadmission.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.testing.MockApiServer;
import io.gpuadmission.node.FakeDeviceManagerAccess;
import io.gpuadmission.node.FakeKubelet;
import io.gpuadmission.node.HttpWatchProxy;
import io.gpuadmission.node.podresources.v1.PodResources;
import io.gpuadmission.testing.Fixtures;
import io.gpuadmission.testing.PackagedApp;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The node agent's footprint (not CI; bench/node-agent.sh): the packaged jar in node-agent mode
 * with the DaemonSet's JVM settings, pinned to one CPU, on a full node (110 pods, 8 of them with
 * the DGX-1's GPUs) served by a fake kubelet and the mock API server, its device plugin registered
 * with a fake device manager. Beside it, in the same run:
 * the JVM floor (the same settings, a main that sleeps) and the agent asking the kubelet only once
 * an hour, so that CPU per round is measured against the agent's own idle cost.
 *
 * <p>Prints per process: resident memory (MiB) once idle, CPU (ms, all threads, from
 * /proc/PID/stat) in the window, kubelet List calls in the window, and the share of
 * one core.
 */
public final class NodeAgentFootprint {
  static final String NODE = "cn-beijing.i-topo-v100-a";
  /** The DGX-1 of node/nvidia-gpus, by index. */
  static final String[] GPU = {
    "GPU-1f0c7a34-5b6e-2d8c-9e41-7a3b5c6d8e90", "GPU-8d2e4f61-0a3b-4c5d-8e7f-1a2b3c4d5e6f",
    "GPU-c4b5a697-8870-4f61-b2a3-d4c5e6f70819", "GPU-27e1d3c5-b7a9-4e8f-9d0c-3b5a7c9e1f20",
    "GPU-5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", "GPU-e0f1a2b3-c4d5-4e6f-9a0b-1c2d3e4f5a6b",
    "GPU-93a4b5c6-d7e8-4f90-a1b2-c3d4e5f6a7b8", "GPU-6c7d8e9f-a0b1-4c2d-be3f-4a5b6c7d8e9f"
  };

  /**
   * -Dbench.nmt=true: the agent also reports its native memory by area, its threads and heap
   * histogram; -Dbench.jvm="...": options after the DaemonSet's (to try others); -Dbench.agent-only=true:
   * only the agent with a round every 5 s; -Dbench.jar=DIR/quarkus-run.jar: another build's jar (to compare;
   * -Dbench.fabric8=true for one whose agent used fabric8).
   */
  private static final boolean NMT = Boolean.getBoolean("bench.nmt");

  private NodeAgentFootprint() {}

  public static void main(String... args) throws Exception {
    var status = 0;
    try {
      run(args);
    } catch (Exception e) {
      e.printStackTrace();
      status = 1;
    }
    // The mock API server's threads would keep this JVM up.
    System.exit(status);
  }

  private static void run(String... args) throws Exception {
    var window = Duration.ofSeconds(args.length > 0 ? Long.parseLong(args[0]) : 120);
    var settle = Duration.ofSeconds(args.length > 1 ? Long.parseLong(args[1]) : 30);
    var jvm = daemonSetOptions();
    System.out.println((PackagedApp.isNative() ? "native executable " + PackagedApp.EXECUTABLE.orElseThrow() + ", options" : "JVM options")
        + " (from the DaemonSet): " + String.join(" ", jvm));
    var work = Files.createTempDirectory("node-agent-bench");
    work.toFile().deleteOnExit();
    java.util.logging.Logger.getLogger("io.fabric8.mockwebserver").setLevel(java.util.logging.Level.WARNING);
    try (var api = MockApiServer.start(5, null); var kubelet = FakeKubelet.start(work);
        var deviceManager = new FakeDeviceManagerAccess(Files.createDirectories(work.resolve("device-plugins")))) {
      var answer = fullNode(api);
      kubelet.answer(answer.toArray(PodResources[]::new));
      String mockUrl;
      try (var admin = api.admin()) {
        mockUrl = admin.getMasterUrl().toString();
      }
      var proxy = HttpWatchProxy.start(mockUrl, apiServerTls());
      var apiServer = apiServerUrl(proxy, mockUrl);
      // A native executable has no JVM floor to measure beside it.
      if (Boolean.getBoolean("bench.agent-only") || PackagedApp.isNative()) {
        System.out.println(measureAgent("agent" + System.getProperty("bench.jvm", ""), jvm, work, kubelet, apiServer, "5s", window, settle, api));
        return;
      }
      var floor = measureFloor(jvm, work, window, settle);
      var idle = measureAgent("agent, one round an hour", jvm, work, kubelet, apiServer, "3600s", window, settle, api);
      var working = measureAgent("agent, a round every 5 s", jvm, work, kubelet, apiServer, "5s", window, settle, api);
      System.out.println(floor);
      System.out.println(idle);
      System.out.println(working);
      var perRound = working.rounds() == 0 ? 0 : (working.cpuMillis() - idle.cpuMillis()) / working.rounds();
      System.out.printf("CPU per round (5 s agent minus hourly agent, over %d rounds): %.2f ms; at one round per 5 s: %.3f%% of a core%n",
          working.rounds(), perRound, perRound / 5000 * 100);
      System.out.printf("RSS: agent %.1f MiB (at most %.1f in the window) = %.2f x the JVM floor (%.1f MiB)%n", working.rssMib(),
          working.rssMaxMib(), working.rssMib() / floor.rssMib(), floor.rssMib());
    }
  }

  /** {@code rssMib} at the window's end, {@code rssMaxMib} the highest of its samples once a second. */
  record Figures(String label, double rssMib, double rssMaxMib, double cpuMillis, long rounds, Duration window) {
    @Override
    public String toString() {
      return String.format("%-28s rss_mib=%.1f rss_max_mib=%.1f cpu_ms=%.1f rounds=%d core_pct=%.3f", label, rssMib, rssMaxMib, cpuMillis,
          rounds, cpuMillis / window.toMillis() * 100);
    }
  }

  /** 110 pods on the node (the kubelet's default maximum), 8 with one whole GPU each; all bound. */
  private static List<PodResources> fullNode(MockApiServer api) {
    var answer = new ArrayList<PodResources>();
    try (var admin = api.admin()) {
      for (int i = 0; i < 110; i++) {
        var name = (i < 8 ? "trainer-" : "service-") + i;
        var builder = new PodBuilder().withNewMetadata().withName(name).withNamespace("default").withUid("uid-" + i)
            .addToAnnotations(i < 8 ? Map.of("gpu-admission.io/gpu-indices", Integer.toString(7 - i)) : Map.of()).endMetadata()
            .withNewSpec().withNodeName(NODE).addNewContainer().withName("main").withImage("nvcr.io/nvidia/pytorch:24.08-py3")
            .withNewResources().addToLimits(i < 8 ? Map.of("nvidia.com/gpu", new Quantity("1")) : Map.of("cpu", new Quantity("1")))
            .endResources().endContainer().endSpec().withNewStatus().withPhase("Running").endStatus();
        Pod pod = builder.build();
        admin.resource(pod).create();
        answer.add(i < 8
            ? FakeKubelet.pod("default", name, FakeKubelet.container("main", FakeKubelet.devices("nvidia.com/gpu", GPU[i])))
            : FakeKubelet.pod("default", name, FakeKubelet.container("main")));
      }
    }
    return answer;
  }

  private static Figures measureFloor(List<String> jvm, Path work, Duration window, Duration settle) throws Exception {
    var command = new ArrayList<String>(List.of("taskset", "-c", "0", javaBin()));
    command.addAll(jvm);
    var classes = Path.of(System.getProperty("java.class.path").split(java.io.File.pathSeparator)[0]).toAbsolutePath().toString();
    command.addAll(List.of("-cp", classes, Sleeper.class.getName()));
    var process = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true)
        .redirectOutput(work.resolve("floor.log").toFile()).start();
    try {
      Thread.sleep(settle.toMillis());
      var before = cpuNanos(process.pid());
      var highest = highestRss(process.pid(), window);
      return new Figures("JVM floor (sleeps)", rssMib(process.pid()), highest, (cpuNanos(process.pid()) - before) / 1e6, 0, window);
    } finally {
      process.destroy();
      process.waitFor();
    }
  }

  /**
   * Where the agent finds the API server: through the proxy that serves watches as kube-apiserver
   * does; the jar of a build whose agent used fabric8 ({@code -Dbench.fabric8=true} with
   * {@code -Dbench.jar}: it watches over WebSocket) talks to the mock itself.
   */
  public static String apiServerUrl(HttpWatchProxy proxy, String mockUrl) {
    return Boolean.getBoolean("bench.fabric8") ? mockUrl : proxy.url();
  }

  /**
   * The proxy's TLS, as kube-apiserver's: the dev certificate (certs/dev/tls.crt, for 127.0.0.1),
   * which the agent checks against the service account's CA ({@link #serviceAccount}) as in a pod.
   */
  public static javax.net.ssl.SSLContext apiServerTls() {
    return io.gpuadmission.testing.DevCertificates.serving();
  }

  /** A service account directory as the kubelet mounts it: the dev CA and a token. */
  public static Path serviceAccount(Path work) throws IOException {
    var dir = Files.createDirectories(work.resolve("serviceaccount"));
    Files.copy(io.gpuadmission.testing.DevCertificates.DIR.resolve("ca.crt"), dir.resolve("ca.crt"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    Files.writeString(dir.resolve("token"), "bench-token");
    return dir;
  }

  private static Figures measureAgent(String label, List<String> jvm, Path work, FakeKubelet kubelet, String apiServer, String period,
      Duration window, Duration settle, MockApiServer api) throws Exception {
    var env = new HashMap<String, String>();
    env.put("QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", apiServer);
    env.put("GPU_ADMISSION_NODE_AGENT_SERVICE_ACCOUNT", serviceAccount(work).toString());
    env.put("GPU_ADMISSION_MODE", "node-agent");
    env.put("GPU_ADMISSION_NODE_AGENT_NODE_NAME", NODE);
    env.put("GPU_ADMISSION_NODE_AGENT_SOCKET", kubelet.socket().toString());
    env.put("GPU_ADMISSION_NODE_AGENT_NVIDIA_GPUS", Fixtures.path("node/nvidia-gpus").toAbsolutePath().toString());
    env.put("GPU_ADMISSION_NODE_AGENT_PERIOD", period);
    env.put("GPU_ADMISSION_NODE_AGENT_HEALTH_PORT", "0");
    // The hourly agent's one round must not miss its kubelet answer on a loaded machine (3 s by default).
    env.put("GPU_ADMISSION_NODE_AGENT_CALL_TIMEOUT", "30s");
    // Its device plugin serves aliyun.com/gpu to a fake device manager, as on a topology node.
    env.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_SERVE", "always");
    env.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_DIR", work.resolve("device-plugins").toString());
    env.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_PCI_DEVICES", work.resolve("no-sysfs").toString());
    env.put("MALLOC_ARENA_MAX", "1");

    try (var admin = api.admin()) {
      admin.pods().inNamespace("default").list().getItems().forEach(p -> {
        if (p.getMetadata().getAnnotations() != null && p.getMetadata().getAnnotations().remove("gpu-admission.io/gpu-allocated") != null) {
          admin.resource(p).update();
        }
      });
    }
    try (var agent = startAgent(work, env, jvm)) {
      Thread.sleep(settle.toMillis());
      if (!agent.alive()) {
        throw new IllegalStateException("the agent stopped:\n" + agent.stdout() + agent.stderr());
      }
      var pid = agent.pid();
      var lists = kubelet.lists();
      var before = cpuNanos(pid);
      var highest = highestRss(pid, window);
      var cpu = (cpuNanos(pid) - before) / 1e6;
      var rounds = kubelet.lists() - lists;
      var rss = rssMib(pid);
      if (Boolean.getBoolean("bench.pmap")) {
        var out = new String(new ProcessBuilder("pmap", "-x", Long.toString(pid)).redirectErrorStream(true).start().getInputStream().readAllBytes());
        System.out.println(out.lines().skip(2).filter(l -> l.matches("^[0-9a-f]+ .*"))
            .sorted(java.util.Comparator.comparingLong((String l) -> -Long.parseLong(l.trim().split("\\s+")[2]))).limit(25)
            .collect(java.util.stream.Collectors.joining("\n")));
      }
      if (NMT) {
        System.out.println(label + ": threads=" + Files.list(Path.of("/proc/" + pid + "/task")).count());
        var jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
        for (var what : List.of("VM.native_memory", "GC.class_histogram")) {
          var out = new String(new ProcessBuilder(jcmd, Long.toString(pid), what, what.startsWith("VM") ? "summary" : "")
              .redirectErrorStream(true).start().getInputStream().readAllBytes());
          System.out.println(out.lines().limit(what.startsWith("VM") ? 200 : 25).collect(java.util.stream.Collectors.joining("\n")));
        }
      }
      try (var admin = api.admin()) {
        var recorded = admin.pods().inNamespace("default").list().getItems().stream()
            .filter(p -> p.getMetadata().getAnnotations() != null && p.getMetadata().getAnnotations().containsKey("gpu-admission.io/gpu-allocated"))
            .count();
        if (recorded != 8) {
          throw new IllegalStateException(label + ": " + recorded + " of 8 GPU pods recorded\n" + agent.stdout());
        }
      }
      return new Figures(label, rss, highest, cpu, rounds, window);
    }
  }

  /**
   * The agent as its DaemonSet starts it, pinned to CPU 0: the jar with the JVM options in
   * JAVA_TOOL_OPTIONS, or (BENCH_EXECUTABLE=node-agent/target/node-agent-runner) the
   * native executable with the native flavour's options as its arguments.
   */
  static PackagedApp.Running startAgent(Path work, Map<String, String> env, List<String> options) {
    if (PackagedApp.isNative()) {
      return PackagedApp.start(work, env, List.of("taskset", "-c", "0"), options.toArray(String[]::new));
    }
    env.put("JAVA_TOOL_OPTIONS", String.join(" ", options) + (NMT ? " -XX:NativeMemoryTracking=summary" : "") + System.getProperty("bench.jvm", ""));
    return PackagedApp.start(work, env, List.of("taskset", "-c", "0"));
  }

  /**
   * The options the DaemonSet gives the agent: the JVM flavour's JAVA_OPTS_APPEND (manifests/), or
   * for the native executable the chart's native flavour's, with -XX:MaxRAM of the DaemonSet's
   * memory limit, which the native kit's executables do not read from a cgroup.
   */
  public static List<String> daemonSetOptions() throws IOException {
    if (!PackagedApp.isNative()) {
      return daemonSetJvmOptions();
    }
    var template = Files.readString(Fixtures.REPOSITORY.resolve("charts/gpu-admission/templates/components/node-agent/daemonset.yaml"));
    var nativeBranch = template.substring(template.indexOf("{{- if eq .Values.image.flavour \"native\" }}", template.indexOf("name: MALLOC_ARENA_MAX")));
    var value = nativeBranch.substring(nativeBranch.indexOf("value: >-") + "value: >-".length(), nativeBranch.indexOf("{{- else }}")).trim();
    var options = new ArrayList<String>(List.of("-XX:MaxRAM=192m"));
    options.addAll(List.of(value.split("\\s+")));
    return options;
  }

  /** The JVM options the DaemonSet's command gives java (JAVA_OPTS_APPEND; it starts the jar as this bench does). */
  public static List<String> daemonSetJvmOptions() throws IOException {
    var yaml = Fixtures.yamlTree(Fixtures.REPOSITORY.resolve("manifests/components/node-agent/daemonset.yaml"));
    var options = new ArrayList<String>();
    for (var env : yaml.at("/spec/template/spec/containers/0/env")) {
      var name = env.path("name").asText();
      if (name.equals("JAVA_OPTS_APPEND")) {
        options.addAll(List.of(env.path("value").asText().trim().split("\\s+")));
      }
    }
    return options;
  }

  /** Waits out {@code window}, reading the process's RSS once a second: the highest reading. */
  private static double highestRss(long pid, Duration window) throws IOException, InterruptedException {
    var end = System.nanoTime() + window.toNanos();
    var highest = rssMib(pid);
    while (System.nanoTime() < end) {
      Thread.sleep(Math.min(1000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
      highest = Math.max(highest, rssMib(pid));
    }
    return highest;
  }

  private static double rssMib(long pid) throws IOException {
    var status = Files.readString(Path.of("/proc/" + pid + "/status"));
    var matcher = Pattern.compile("VmRSS:\\s+(\\d+) kB").matcher(status);
    return matcher.find() ? Long.parseLong(matcher.group(1)) / 1024.0 : -1;
  }

  /**
   * CPU time of the process in nanoseconds: user and system time of all its threads, ended ones
   * included (/proc/PID/stat, in clock ticks of 10 ms: windows of minutes keep that error small).
   */
  private static long cpuNanos(long pid) throws IOException {
    var stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    var fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
    var ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    return ticks * 10_000_000L;
  }

  private static String javaBin() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** The JVM floor: starts, then sleeps. */
  public static final class Sleeper {
    public static void main(String... args) throws InterruptedException {
      Thread.sleep(Long.MAX_VALUE);
    }
  }
}
