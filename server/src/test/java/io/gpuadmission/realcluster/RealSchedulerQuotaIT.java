package io.gpuadmission.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.cluster.QuotaTreeWatcher;
import io.gpuadmission.placement.HeldRoom;
import io.gpuadmission.testing.PackagedApp;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Team quotas through a real kube-scheduler ({@link RealCluster}: the harness restarts it with the
 * shipped extender stanza, {@code manifests/control-plane/kube-scheduler-config.yaml}, pointed at
 * the packaged server started here). Three fake nodes of four whole GPUs (no kubelet: a stand-in
 * here deletes a pod a second after it is marked for deletion, as a kubelet ends a container) and
 * a tree of root 12, team-a min 4 max 8, team-b min 8 max 12:
 * <ol>
 *   <li>team-a's ten one-GPU pods: eight bound, two waiting with the quota's reason;
 *   <li>team-a's max raised to 12: its two pods bound within 30 s (not after kube-scheduler's
 *       5-minute flush: the tree change requeues them);
 *   <li>team-b, under its min, creates six pods with two GPUs free and every node then full: all
 *       six bound within 60 s, the victims team-a's only, team-a never below its min, and team-b
 *       never taken below its min after that: not by team-a's new pods, nor by kube-scheduler's
 *       priority preemption for them (team-a's pods have the higher priority, so its victims
 *       would be team-b's);
 *   <li>team-b, still under its min, creates two pods of a priority above everyone's: bound
 *       within 60 s with exactly two victims, team-a's (reclaim and kube-scheduler's preemption
 *       do not both evict for one pod), and none of team-b's own lower-priority pods;
 *   <li>a leader restart while reclaim's victims terminate: two of team-b's pods go, team-a's
 *       waiting pods take their GPUs, team-b creates two pods (under its min again) and reclaim
 *       evicts two of team-a's; the server is killed, the victims end, a new server starts and,
 *       once it leads, team-a creates two pods of its higher priority: team-b's two pods bound
 *       within 60 s with no victim more (the room held for them is on the pods, not in the dead
 *       leader's memory, so the quota refuses team-a's new pods the freed GPUs).
 * </ol>
 * The times are printed (bench/README.md and docs/quotas.md give them).
 */
@ExtendWith(RealCluster.GivenWithScheduler.class)
class RealSchedulerQuotaIT {
  private static final List<String> NODES = List.of("quota-it-a", "quota-it-b", "quota-it-c");
  private static final String CRD = "elasticquotatrees.scheduling.sigs.k8s.io";
  private static final String TEAM_A_PRIORITY = "quota-it-team-a";
  private static final String URGENT_PRIORITY = "quota-it-urgent";

  @TempDir Path work;

  @Test
  void aRaisedMaxBindsAtOnceAndATeamUnderItsMinGetsItsGpusBackOnFullNodes() throws Exception {
    try (var admin = RealCluster.admin()) {
      // It restarts kube-scheduler and deletes what it made: never on a cluster someone is using.
      for (var namespace : List.of("team-a", "team-b")) {
        assertThat(admin.namespaces().withName(namespace).get()).as("RealSchedulerQuotaIT needs a throwaway cluster: namespace %s exists", namespace).isNull();
      }
      if (admin.apiextensions().v1().customResourceDefinitions().withName(CRD).get() != null) {
        assertThat(admin.genericKubernetesResources(QuotaTreeWatcher.TREES).inNamespace("kube-system").list().getItems())
            .as("RealSchedulerQuotaIT needs a throwaway cluster: an ElasticQuotaTree is in force in kube-system").isEmpty();
      }
      var createdCrd = admin.apiextensions().v1().customResourceDefinitions().withName(CRD).get() == null;
      if (createdCrd) {
        try (var crd = Files.newInputStream(Path.of("charts/gpu-admission/crds/elasticquotatrees.yaml"))) {
          admin.apiextensions().v1().customResourceDefinitions().load(crd).create();
        }
      }
      var service = "gpu-admission-it-" + Long.toHexString(System.nanoTime() & 0xffffff);
      for (var namespace : List.of(service, "team-a", "team-b")) {
        admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
      }
      fakeNodes(admin);
      admin.scheduling().v1().priorityClasses().withName(TEAM_A_PRIORITY).delete(); // a run stopped half way left it
      admin.scheduling().v1().priorityClasses().resource(new PriorityClassBuilder().withNewMetadata().withName(TEAM_A_PRIORITY).endMetadata()
          .withValue(100).build()).create();
      admin.scheduling().v1().priorityClasses().withName(URGENT_PRIORITY).delete();
      admin.scheduling().v1().priorityClasses().resource(new PriorityClassBuilder().withNewMetadata().withName(URGENT_PRIORITY).endMetadata()
          .withValue(1000).build()).create();
      var port = freePort();
      var env = Map.of("KUBECONFIG", RealCluster.kubeconfig().orElseThrow().toString(), "QUARKUS_HTTP_SSL_PORT", Integer.toString(port),
          "GPU_ADMISSION_POLICY_NAMESPACE", service);
      var kubelet = Executors.newSingleThreadScheduledExecutor();
      var kubeletStopped = new java.util.concurrent.atomic.AtomicBoolean();
      try (var server = PackagedApp.start(Path.of("").toAbsolutePath(), env)) {
        var https = new RealClusterIT.ServerCalls(port);
        ready(server, https);
        scheduler(schedulerConfig(port));
        admin.genericKubernetesResources(QuotaTreeWatcher.TREES).inNamespace("kube-system").resource(tree(8)).create();
        await().atMost(Duration.ofSeconds(20)).until(() -> https.inspect().path("quotas").path("tree").asText().equals("kube-system/quotas"));
        var ending = new ConcurrentHashMap<String, Long>();
        kubelet.scheduleWithFixedDelay(() -> endTerminatingPods(admin, ending, kubeletStopped), 200, 200, TimeUnit.MILLISECONDS);

        // 1. team-a's ten pods: eight bound, two waiting with the quota's reason.
        for (var i = 0; i < 10; i++) {
          admin.resource(gpuPod("team-a", "a-" + i)).create();
        }
        said(admin, () -> await().atMost(Duration.ofSeconds(60)).until(() -> bound(admin, "team-a") == 8 && waitsWith(admin, "team-a",
            "quota team-a: nvidia.com/gpu used 8 + asked 1 > max 8") == 2));
        assertThat(bound(admin, "team-a")).isEqualTo(8);

        // 2. team-a's max raised to 12: its two waiting pods bound at once.
        var raised = System.nanoTime();
        admin.genericKubernetesResources(QuotaTreeWatcher.TREES).inNamespace("kube-system").withName("quotas")
            .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"root\":{\"children\":" + children(12) + "}}}");
        said(admin, () -> await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> bound(admin, "team-a") == 10));
        var raisedSeconds = (System.nanoTime() - raised) / 1e9;
        System.out.printf("real kube-scheduler: team-a's 2 waiting pods bound %.1f s after its max was raised to 12%n", raisedSeconds);

        // 3. team-b under its min: six pods, two GPUs free, then every node full.
        var created = System.nanoTime();
        for (var i = 0; i < 6; i++) {
          admin.resource(gpuPod("team-b", "b-" + i)).create();
        }
        var lowestTeamA = new int[] {10};
        said(admin, () -> await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
          lowestTeamA[0] = Math.min(lowestTeamA[0], bound(admin, "team-a"));
          return bound(admin, "team-b") == 6;
        }));
        var reclaimSeconds = (System.nanoTime() - created) / 1e9;
        System.out.printf("real kube-scheduler: team-b's 6 pods (4 of them on full nodes) bound %.1f s after they were created;"
            + " team-a went down to %d pods (min 4)%n", reclaimSeconds, lowestTeamA[0]);
        assertThat(lowestTeamA[0]).isGreaterThanOrEqualTo(4);
        assertThat(bound(admin, "team-a")).isEqualTo(6);
        assertThat(victims(admin, "team-b")).isEmpty();
        assertThat(victims(admin, "team-a")).hasSize(4).allMatch(m -> m.startsWith("quota team-b took back its GPUs on node quota-it-"));

        // team-b is never taken below its min after that: team-a's pods wait, none of team-b's goes.
        // Theirs is the higher priority, so kube-scheduler's own preemption picks team-b's pods as
        // victims: the extender's preempt verb drops every such node (team-a borrows).
        for (var i = 10; i < 14; i++) {
          admin.resource(gpuPod("team-a", "a-" + i)).create();
        }
        await().during(Duration.ofSeconds(15)).atMost(Duration.ofSeconds(20))
            .until(() -> bound(admin, "team-b") == 6 && disruptionTargets(admin, "team-b") == 0);
        assertThat(victims(admin, "team-b")).isEmpty();
        assertThat(bound(admin, "team-a")).isEqualTo(6);

        // 4. team-b, still under its min, creates two pods of a priority above everyone's: reclaim
        // and kube-scheduler's priority preemption could both act for each (its preemption may take
        // team-b's own lower-priority pods). Two victims in all, team-a's, and none of team-b's.
        var urgentAt = System.nanoTime();
        for (var i = 0; i < 2; i++) {
          var urgent = gpuPod("team-b", "urgent-" + i);
          urgent.getSpec().setPriorityClassName(URGENT_PRIORITY);
          admin.resource(urgent).create();
        }
        said(admin, () -> await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> bound(admin, "team-b") == 8));
        System.out.printf("real kube-scheduler: team-b's 2 urgent pods (under its min, priority above all) bound %.1f s after they were created%n",
            (System.nanoTime() - urgentAt) / 1e9);
        await().during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(15))
            .until(() -> bound(admin, "team-b") == 8 && disruptionTargets(admin, "team-b") == 0 && pods(admin, "team-b") == 8);
        assertThat(pods(admin, "team-a")).as("team-a's pods: 6 bound and 4 waiting before, exactly two evicted").isEqualTo(8);
        assertThat(bound(admin, "team-a")).isEqualTo(4);

        // 5. A leader restart while reclaim's victims terminate. Two of team-b's pods go and two of
        // team-a's waiting pods take their GPUs; team-b, under its min again, creates two pods.
        var victimsBefore = victims(admin, "team-a").size();
        kubeletStopped.set(true);
        for (var name : List.of("b-0", "b-1")) {
          admin.pods().inNamespace("team-b").withName(name).withGracePeriod(0).delete();
        }
        said(admin, () -> await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> bound(admin, "team-a") == 6));
        for (var name : List.of("b-6", "b-7")) {
          admin.resource(gpuPod("team-b", name)).create();
        }
        said(admin, () -> await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() ->
            victims(admin, "team-a").size() == victimsBefore + 2 && List.of("b-6", "b-7").stream().allMatch(name ->
                HeldRoom.of(admin.pods().inNamespace("team-b").withName(name).get()).isPresent())));
        // The leader dies (no Lease released) and its victims end; a new server takes over. Once it
        // leads, team-a creates two pods of its higher priority: kube-scheduler tries them before
        // team-b's (in backoff from the failed calls meanwhile) and finds the freed GPUs; the room
        // held for team-b's pods, read from the pods, makes the quota refuse them.
        ProcessHandle.of(server.pid()).ifPresent(ProcessHandle::destroyForcibly);
        ProcessHandle.of(server.pid()).ifPresent(dying -> dying.onExit().join());
        kubeletStopped.set(false);
        said(admin, () -> await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> disruptionTargets(admin, "team-a") == 0));
        var restarted = System.nanoTime();
        try (var next = PackagedApp.start(Path.of("").toAbsolutePath(), env)) {
          ready(next, https);
          await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(https::leading);
          var heldUntil = HeldRoom.of(admin.pods().inNamespace("team-b").withName("b-6").get()).orElseThrow().until();
          assertThat(heldUntil).as("too slow: the room's hold (two cool-downs from the reclaim) ran out before the new server led")
              .isAfter(java.time.Instant.now().plusSeconds(5));
          for (var name : List.of("a-20", "a-21")) {
            admin.resource(gpuPod("team-a", name)).create();
          }
          said(admin, () -> await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> bound(admin, "team-b") == 8));
          System.out.printf("real kube-scheduler: after a leader restart while reclaim's victims terminated, team-b's 2 pods bound %.1f s"
              + " after the new server started; reclaim victims %d (2 before the restart)%n", (System.nanoTime() - restarted) / 1e9,
              victims(admin, "team-a").size() - victimsBefore);
          await().during(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(15))
              .until(() -> bound(admin, "team-b") == 8 && disruptionTargets(admin, "team-a") == 0);
          assertThat(victims(admin, "team-a")).hasSize(victimsBefore + 2);
          assertThat(bound(admin, "team-a")).isEqualTo(4);
          assertThat(pods(admin, "team-a")).as("team-a's pods: 4 bound, 4 waiting").isEqualTo(8);
        }
      } finally {
        admin.scheduling().v1().priorityClasses().withName(TEAM_A_PRIORITY).delete();
        admin.scheduling().v1().priorityClasses().withName(URGENT_PRIORITY).delete();
        kubelet.shutdownNow();
        scheduler(null);
        for (var namespace : List.of("team-a", "team-b")) {
          admin.pods().inNamespace(namespace).withGracePeriod(0).delete();
        }
        admin.genericKubernetesResources(QuotaTreeWatcher.TREES).inNamespace("kube-system").withName("quotas").delete();
        NODES.forEach(n -> admin.nodes().withName(n).delete());
        for (var namespace : List.of(service, "team-a", "team-b")) {
          admin.namespaces().withName(namespace).delete();
        }
        if (createdCrd) {
          admin.apiextensions().v1().customResourceDefinitions().withName(CRD).delete();
        }
      }
    }
  }

  /** Waits until the packaged server is Ready. */
  private static void ready(PackagedApp.Running server, RealClusterIT.ServerCalls https) {
    await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).until(() -> {
      assertThat(server.alive()).as("the server exited:%n%s", server.stdout()).isTrue();
      return https.status("/q/health/ready") == 200;
    });
  }

  /** Runs {@code step}; when it times out, says where each pod is and why kube-scheduler says it waits. */
  private static void said(KubernetesClient admin, Runnable step) {
    try {
      step.run();
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      var state = new StringBuilder();
      for (var namespace : List.of("team-a", "team-b")) {
        for (var pod : admin.pods().inNamespace(namespace).list().getItems()) {
          var scheduled = pod.getStatus() == null || pod.getStatus().getConditions() == null ? "" : pod.getStatus().getConditions().stream()
              .filter(c -> "PodScheduled".equals(c.getType())).map(c -> c.getStatus() + " " + c.getReason() + ": " + c.getMessage()).findFirst()
              .orElse("");
          state.append(String.format("%n  %s/%s node=%s deleting=%s %s", namespace, pod.getMetadata().getName(), pod.getSpec().getNodeName(),
              pod.getMetadata().getDeletionTimestamp() != null, scheduled));
        }
        admin.v1().events().inNamespace(namespace).list().getItems().stream().filter(ev -> !"Scheduled".equals(ev.getReason()))
            .forEach(ev -> state.append(String.format("%n  event %s %s: %s", ev.getInvolvedObject().getName(), ev.getReason(), ev.getMessage())));
      }
      throw new AssertionError(e.getMessage() + state, e);
    }
  }

  /** Three nodes of four whole GPUs, Ready, with the labels ACK's GPU nodes carry; no kubelet behind them. */
  private static void fakeNodes(KubernetesClient admin) {
    var now = java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    for (var name : NODES) {
      admin.resource(new NodeBuilder().withNewMetadata().withName(name)
          .withLabels(Map.of("kubernetes.io/hostname", name, "gpu-admission-it", "fake", "aliyun.accelerator/nvidia_count", "4",
              "aliyun.accelerator/nvidia_mem", "16384MiB", "aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB"))
          .endMetadata().build()).create();
      var resources = Map.of("cpu", "16", "memory", "64Gi", "pods", "110", "nvidia.com/gpu", "4");
      var status = Map.of("capacity", resources, "allocatable", resources, "conditions", List.of(Map.of("type", "Ready", "status", "True",
          "reason", "KubeletReady", "message", "fake node (RealSchedulerQuotaIT)", "lastHeartbeatTime", now, "lastTransitionTime", now)));
      admin.nodes().withName(name).subresource("status")
          .patch(PatchContext.of(PatchType.JSON_MERGE), admin.getKubernetesSerialization().asJson(Map.of("status", status)));
      // The not-ready taint a new Node gets; the harness runs no node-lifecycle controller to lift it.
      admin.nodes().withName(name).edit(n -> {
        if (n.getSpec().getTaints() != null) {
          n.getSpec().setTaints(n.getSpec().getTaints().stream().filter(t -> !t.getKey().equals("node.kubernetes.io/not-ready")).toList());
        }
        return n;
      });
    }
  }

  /** A one-GPU pod; team-a's with the higher priority ({@link #TEAM_A_PRIORITY}). */
  private static Pod gpuPod(String namespace, String name) {
    return new PodBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata().withNewSpec()
        .withPriorityClassName(namespace.equals("team-a") ? TEAM_A_PRIORITY : null)
        .withNodeSelector(Map.of("gpu-admission-it", "fake")).withTerminationGracePeriodSeconds(1L)
        .addNewContainer().withName("train").withImage("registry.example.com/train:1").withNewResources()
        .addToLimits("nvidia.com/gpu", new Quantity("1")).addToRequests("cpu", new Quantity("100m")).endResources().endContainer()
        .endSpec().build();
  }

  /**
   * What a kubelet does for a pod on one of the fake nodes marked for deletion: the container ends
   * a second later; while {@code stopped}, it stays terminating.
   */
  private static void endTerminatingPods(KubernetesClient admin, Map<String, Long> seen, java.util.concurrent.atomic.AtomicBoolean stopped) {
    if (stopped.get()) {
      seen.clear();
      return;
    }
    try {
      for (var namespace : List.of("team-a", "team-b")) {
        for (var pod : admin.pods().inNamespace(namespace).list().getItems()) {
          if (pod.getMetadata().getDeletionTimestamp() == null || pod.getSpec().getNodeName() == null) {
            continue;
          }
          var first = seen.computeIfAbsent(pod.getMetadata().getUid(), uid -> System.nanoTime());
          if (System.nanoTime() - first > 1_000_000_000L) {
            admin.pods().inNamespace(namespace).withName(pod.getMetadata().getName()).withGracePeriod(0).delete();
          }
        }
      }
    } catch (RuntimeException e) {
      // the next round
    }
  }

  /** Pods of {@code namespace} that a preemption or reclaim marked for eviction. */
  private static long disruptionTargets(KubernetesClient admin, String namespace) {
    return admin.pods().inNamespace(namespace).list().getItems().stream()
        .filter(p -> p.getStatus() != null && p.getStatus().getConditions() != null
            && p.getStatus().getConditions().stream().anyMatch(c -> "DisruptionTarget".equals(c.getType())))
        .count();
  }

  /** Pods of {@code namespace} not marked for deletion, bound or not. */
  private static int pods(KubernetesClient admin, String namespace) {
    return (int) admin.pods().inNamespace(namespace).list().getItems().stream().filter(p -> p.getMetadata().getDeletionTimestamp() == null).count();
  }

  private static int bound(KubernetesClient admin, String namespace) {
    return (int) admin.pods().inNamespace(namespace).list().getItems().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null && p.getSpec().getNodeName() != null).count();
  }

  /** Pending pods of {@code namespace} (not bound) whose FailedScheduling events name {@code reason}. */
  private static long waitsWith(KubernetesClient admin, String namespace, String reason) {
    var pending = admin.pods().inNamespace(namespace).list().getItems().stream().filter(p -> p.getSpec().getNodeName() == null)
        .map(p -> p.getMetadata().getName()).collect(java.util.stream.Collectors.toSet());
    return admin.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> "FailedScheduling".equals(e.getReason()) && e.getMessage() != null && e.getMessage().contains(reason))
        .map(e -> e.getInvolvedObject().getName()).filter(pending::contains).distinct().count();
  }

  /** The messages of the QuotaReclaimed Events in {@code namespace}: its pods that were reclaim's victims. */
  private static List<String> victims(KubernetesClient admin, String namespace) {
    return admin.v1().events().inNamespace(namespace).list().getItems().stream().filter(e -> "QuotaReclaimed".equals(e.getReason()))
        .map(e -> e.getMessage()).toList();
  }

  private static GenericKubernetesResource tree(int teamAMax) throws Exception {
    var yaml = """
        apiVersion: scheduling.sigs.k8s.io/v1beta1
        kind: ElasticQuotaTree
        metadata: {name: quotas, namespace: kube-system}
        spec:
          root:
            name: root
            min: {nvidia.com/gpu: 12}
            max: {nvidia.com/gpu: 12}
            children: %s
        """.formatted(children(teamAMax));
    return io.gpuadmission.admission.KubernetesJson.mapper()
        .convertValue(new com.fasterxml.jackson.dataformat.yaml.YAMLMapper().readTree(yaml), GenericKubernetesResource.class);
  }

  private static String children(int teamAMax) {
    return "[{\"name\":\"team-a\",\"min\":{\"nvidia.com/gpu\":4},\"max\":{\"nvidia.com/gpu\":" + teamAMax + "},\"namespaces\":[\"team-a\"]},"
        + "{\"name\":\"team-b\",\"min\":{\"nvidia.com/gpu\":8},\"max\":{\"nvidia.com/gpu\":12},\"namespaces\":[\"team-b\"]}]";
  }

  /** The shipped extender stanza, calling the server of this test with the development certificates. */
  private Path schedulerConfig(int port) throws Exception {
    var root = Path.of("").toAbsolutePath();
    var shipped = Files.readString(Path.of("manifests/control-plane/kube-scheduler-config.yaml"));
    var config = shipped.replace("https://127.0.0.1:32443/extender", "https://127.0.0.1:" + port + "/extender")
        .replace("/etc/kubernetes/gpu-admission/ca.crt", root.resolve("certs/dev/ca.crt").toString())
        .replace("/etc/kubernetes/gpu-admission/scheduler.crt", root.resolve("certs/dev/scheduler.crt").toString())
        .replace("/etc/kubernetes/gpu-admission/scheduler.key", root.resolve("certs/dev/scheduler.key").toString());
    assertThat(config).contains("127.0.0.1:" + port).doesNotContain("/etc/kubernetes/gpu-admission/");
    var file = work.resolve("kube-scheduler-config.yaml");
    Files.writeString(file, config);
    return file;
  }

  /** Restarts the harness's kube-scheduler with {@code config}, or with its default configuration. */
  private static void scheduler(Path config) throws Exception {
    var command = new ArrayList<>(List.of(RealCluster.harness().orElseThrow().resolve("scheduler.sh").toString(), "restart"));
    if (config != null) {
      command.add(config.toString());
    }
    // The port the stopped kube-scheduler served may not be free again at once (seen: "port
    // 127.0.0.1:20259 is taken" right after "stopped kube-scheduler"): a few tries a second apart.
    for (var attempt = 1; ; attempt++) {
      var process = new ProcessBuilder(command).redirectErrorStream(true).start();
      var output = new String(process.getInputStream().readAllBytes());
      var exit = process.waitFor();
      if (exit != 0 && output.contains("is taken") && attempt < 5) {
        Thread.sleep(1000);
        continue;
      }
      assertThat(exit).as("scheduler.sh restart: %s", output).isZero();
      return;
    }
  }

  private static int freePort() throws Exception {
    try (var socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
