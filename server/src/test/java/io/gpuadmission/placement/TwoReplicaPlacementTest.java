package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.cluster.BoundPods;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.cluster.PlacementLeadership;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two replicas of the placement service against one API server, binding a few hundred pods at
 * once through both: no GPU is over-committed, a leader change in the middle loses and duplicates
 * nothing, and a replica restarted in the middle rebuilds the ledger the pods' annotations hold.
 */
class TwoReplicaPlacementTest {
  private static final String NS = "ml-team-a";
  private static final int NODES = 12;
  private static final int GPUS = 4;
  private static final long GPU_GIB = 15;
  private static final int PODS = 300;
  private static final PlacementLeadership.Timing FAST = new PlacementLeadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofMillis(200));

  private final GpuPolicy policy = PolicyParser.builtInDefault();
  private BindingApiServer.Started api;
  private KubernetesClient admin;
  private final List<Replica> replicas = new CopyOnWriteArrayList<>();

  /** One replica: its own client, informers, ledger, election and binder. */
  private final class Replica implements AutoCloseable {
    final KubernetesClient client = api.client();
    final GpuLedger ledger = new GpuLedger();
    final LeaderGate gate;
    final PlacementDecider decider = new PlacementDecider(ledger, () -> policy);
    final PodBinder binder;
    final LedgerWatcher watcher;
    final PlacementLeadership leadership;

    Replica(String identity) {
      gate = new LeaderGate(identity);
      binder = new PodBinder(client, ledger, decider, gate, () -> policy, Clock.systemUTC(), Duration.ofMinutes(5));
      watcher = new LedgerWatcher(client, ledger, () -> policy).start();
      leadership = new PlacementLeadership(client, ledger, gate, () -> policy).start(NS, "gpu-admission-placement", FAST);
    }

    @Override
    public void close() {
      leadership.close();
      watcher.close();
      client.close();
    }
  }

  @BeforeEach
  void cluster() {
    api = BindingApiServer.start();
    admin = api.server().createClient();
    for (int n = 0; n < NODES; n++) {
      admin.resource(new NodeBuilder().withNewMetadata().withName("gpu-" + n)
          .addToLabels("aliyun.accelerator/nvidia_count", Integer.toString(GPUS))
          .addToLabels("aliyun.accelerator/nvidia_mem", "16130MiB")
          .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB")
          .endMetadata().build()).create();
    }
    for (int p = 0; p < PODS; p++) {
      // 2..5 GiB: 1,050 GiB asked of 720 GiB, so GPUs run full and binds race for the last room.
      admin.resource(PlacementFixtures.sharePod("share-" + p, NS, 2 + p % 4)).create();
    }
  }

  @AfterEach
  void stop() {
    replicas.forEach(Replica::close);
    admin.close();
    api.server().destroy();
  }

  @Test
  void concurrentBindsThroughTwoReplicasNeverOvercommitAcrossLeaderChangeAndRestart() throws Exception {
    replicas.add(new Replica("replica-a"));
    replicas.add(new Replica("replica-b"));
    await().atMost(Duration.ofSeconds(20)).until(() -> replicas.stream().anyMatch(r -> r.gate.leading()));
    for (var r : replicas) {
      await().atMost(Duration.ofSeconds(20)).until(() -> r.ledger.nodes().size() == NODES);
    }

    var queue = new ConcurrentLinkedQueue<String>();
    for (int p = 0; p < PODS; p++) {
      queue.add("share-" + p);
    }
    var succeeded = new AtomicInteger();
    var attempts = new AtomicInteger();
    var scheduler = Executors.newFixedThreadPool(4);
    for (int t = 0; t < 4; t++) {
      var thread = t;
      scheduler.submit(() -> schedule(queue, thread, succeeded, attempts));
    }

    // A third of the way in: the leader steps down, the other takes over; then the old leader restarts.
    await().atMost(Duration.ofSeconds(60)).until(() -> succeeded.get() >= PODS / 3);
    var leader = replicas.stream().filter(r -> r.gate.leading()).findFirst().orElseThrow();
    var identity = leader.gate.identity();
    leader.close();
    replicas.remove(leader);
    await().atMost(Duration.ofSeconds(20)).until(() -> replicas.get(0).gate.leading());
    await().atMost(Duration.ofSeconds(60)).until(() -> succeeded.get() >= PODS / 2);
    replicas.add(new Replica(identity + "-restarted"));

    scheduler.shutdown();
    assertThat(scheduler.awaitTermination(3, TimeUnit.MINUTES)).isTrue();

    var pods = admin.pods().inNamespace(NS).list().getItems();
    var bound = pods.stream().filter(p -> p.getSpec().getNodeName() != null).toList();
    // Nothing duplicated: one Binding per bound pod, each bound pod reported bound once.
    assertThat(api.bindings().created()).isEqualTo(bound.size()).isEqualTo(succeeded.get());
    // Nothing lost: every bound pod carries its choice.
    assertThat(bound).allSatisfy(p -> assertThat(PodClaims.claimOf(p)).isPresent());
    // No GPU over-committed, counted from the pods themselves.
    var used = new HashMap<String, Long>();
    for (var pod : bound) {
      var claim = PodClaims.claimOf(pod).orElseThrow();
      used.merge(claim.node() + "/" + claim.gpus().get(0), claim.memory(), Long::sum);
    }
    assertThat(used.values()).allSatisfy(u -> assertThat(u).isLessThanOrEqualTo(GPU_GIB));
    // The cluster is nearly full: the test did race for the last room.
    assertThat(used.values().stream().mapToLong(Long::longValue).sum()).isGreaterThan(NODES * GPUS * GPU_GIB * 9 / 10);

    // A ledger rebuilt from a list equals what the annotations say and what each replica's informers hold.
    var rebuilt = new GpuLedger();
    rebuilt.rebuild(BoundPods.list(admin, policy));
    var truth = summary(rebuilt);
    assertThat(truth).hasSize(bound.size());
    for (var r : replicas) {
      await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(summary(r.ledger)).isEqualTo(truth));
    }
  }

  private static Map<String, String> summary(GpuLedger ledger) {
    return ledger.claims().values().stream()
        .filter(c -> c.phase() == GpuClaim.Phase.BOUND)
        .collect(Collectors.toMap(GpuClaim::pod, c -> c.node() + " " + c.gpus() + " " + c.memory() + "GiB"));
  }

  /**
   * A kube-scheduler: filter and prioritize on some replica, bind there; on an error (a follower,
   * a replica shutting down, GPUs just taken) back off and try again, as the scheduler requeues the
   * pod. A pod that fits no node three times in a row stays pending.
   */
  private void schedule(ConcurrentLinkedQueue<String> queue, int thread, AtomicInteger succeeded, AtomicInteger attempts) {
    String name;
    while ((name = queue.poll()) != null) {
      Pod pod = admin.pods().inNamespace(NS).withName(name).get();
      var ask = GpuAsk.of(pod, policy);
      var nowhere = 0;
      while (nowhere < 3) {
        var all = replicas;
        var replica = all.get(Math.floorMod(thread + attempts.incrementAndGet(), all.size()));
        try {
          var passed = replica.decider.filter(ask, new ArrayList<>(replica.ledger.nodes())).passed();
          if (passed.isEmpty()) {
            nowhere++;
            Thread.sleep(50);
            continue;
          }
          nowhere = 0;
          var best = replica.decider.prioritize(ask, passed).stream().max((a, b) -> Integer.compare(a.score(), b.score())).orElseThrow();
          if (replica.binder.bind(new BindRequest(NS, name, pod.getMetadata().getUid(), best.node())).isEmpty()) {
            succeeded.incrementAndGet();
            break;
          }
          Thread.sleep(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        } catch (RuntimeException replicaGone) {
          // The replica was closed under this call (the restart in the middle): try another.
        }
      }
    }
  }
}
