package io.gpuadmission.bench;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.gang.GangCoordinator;
import io.gpuadmission.gang.GangEvents;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.gang.GangMetrics;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangRegistry;
import io.gpuadmission.placement.BindRequest;
import io.gpuadmission.placement.BindingApiServer;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PodBinder;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

/**
 * How long a gang takes from its last member's creation to all members bound, on the mock API
 * server, with a kube-scheduler stand-in that has kube-scheduler's queue behaviour for pods an
 * extender refuses: they wait in the unschedulable set until the pod is updated (then they are
 * retried once their backoff of 1 s, doubling, at most 10 s, has passed); an update that arrives
 * while the pod is being tried is replayed when it fails, as kube-scheduler's in-flight events
 * are. Without the plan written on the members they would wait for some other cluster event or
 * kube-scheduler's 5-minute flush. The baseline, in the same run: the same number of pods of the
 * same size that are no gang (a topology job of one replica), creation to bound.
 *
 * <pre>bench/gang-latency.sh [gangs] [members] [gpus each]</pre>
 */
public final class GangLatencyBench {
  private static final String NS = "ml";
  private static final Duration INITIAL_BACKOFF = Duration.ofSeconds(1);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(10);

  public static void main(String[] args) throws Exception {
    var gangs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    var members = args.length > 1 ? Integer.parseInt(args[1]) : 4;
    var gpus = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    System.out.printf("gangs %d of %d members x %d GPUs, on %d DGX-1 nodes%n", gangs, members, gpus, nodesFor(gangs, members, gpus));
    var gang = run(gangs, members, gpus, members);
    var single = run(gangs, members, gpus, 1);
    System.out.printf("%-46s %8s %8s %8s%n", "created -> bound (gang: last member -> all)", "p50 ms", "p90 ms", "max ms");
    print("gang of " + members + " x " + gpus + " GPUs", gang);
    print("baseline: single pods of " + gpus + " GPUs (no gang)", single);
    System.exit(0); // the mock server's and informers' threads would keep the JVM up
  }

  private static void print(String what, List<Long> millis) {
    var sorted = millis.stream().sorted().toList();
    System.out.printf("%-46s %8d %8d %8d%n", what, sorted.get(sorted.size() / 2), sorted.get(sorted.size() * 9 / 10), sorted.get(sorted.size() - 1));
  }

  private static int nodesFor(int gangs, int members, int gpus) {
    return Math.max(1, (gangs * members * gpus + 7) / 8);
  }

  /**
   * One run on a fresh mock API server: {@code gangs} jobs of {@code members} pods one after
   * another, each pod a member of a job of {@code replicas} (1: no gang); their placement times.
   */
  private static List<Long> run(int gangs, int members, int gpus, int replicas) throws Exception {
    var api = BindingApiServer.start();
    var policy = PolicyParser.parse(Fixtures.text(Fixtures.path("gang/policy.yaml")));
    try (KubernetesClient client = api.server().createClient()) {
      for (int n = 0; n < nodesFor(gangs, members, gpus); n++) {
        client.resource(dgx1("dgx1-" + n)).create();
      }
      var replica = new Replica(client, policy);
      var scheduler = new SchedulerStandIn(client, replica);
      var times = new ArrayList<Long>();
      for (int g = 0; g < gangs; g++) {
        for (int m = 0; m < members; m++) {
          var job = replicas == 1 ? "job-" + g + "-" + m : "job-" + g;
          client.resource(member(job, m, replicas, gpus)).create();
          var created = System.nanoTime();
          if (replicas == 1) {
            while (scheduler.bound(job) < 1) {
              Thread.sleep(2);
            }
            times.add((scheduler.lastBind(job) - created) / 1_000_000);
          } else if (m == members - 1) {
            while (scheduler.bound(job) < members) {
              Thread.sleep(2);
            }
            times.add((scheduler.lastBind(job) - created) / 1_000_000);
          } else {
            Thread.sleep(20);
          }
        }
      }
      scheduler.close();
      replica.close();
      return times;
    } finally {
      api.server().destroy();
    }
  }

  private static Node dgx1(String name) {
    return new NodeBuilder().withNewMetadata().withName(name)
        .addToLabels("aliyun.accelerator/nvidia_count", "8")
        .addToLabels("aliyun.accelerator/nvidia_mem", "16160MiB")
        .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB")
        .addToLabels("ack.node.gpu.schedule", "topology")
        .endMetadata().withNewStatus().addToAllocatable("aliyun.com/gpu", new Quantity("8")).endStatus().build();
  }

  private static Pod member(String job, int index, int members, int gpus) {
    return new PodBuilder().withNewMetadata().withName(job + "-" + index).withNamespace(NS)
        .addToLabels("gpu-topology", job).addToLabels("gpu-topology-replica", Integer.toString(members)).endMetadata()
        .withNewSpec().addToNodeSelector("ack.node.gpu.schedule", "topology")
        .addNewContainer().withName("train").withImage("cuda")
        .withNewResources().addToLimits("aliyun.com/gpu", new Quantity(Integer.toString(gpus))).endResources().endContainer()
        .endSpec().build();
  }

  /** The service's placement half, as PlacementWiring builds it. */
  private static final class Replica implements AutoCloseable {
    final GpuLedger ledger = new GpuLedger();
    final PlacementDecider decider;
    final GangGate gate;
    final PodBinder binder;
    final LedgerWatcher watcher;
    final GangCoordinator coordinator;
    final GpuPolicy policy;

    Replica(KubernetesClient client, GpuPolicy policy) {
      this.policy = policy;
      var leader = LeaderGate.alone("bench");
      decider = new PlacementDecider(ledger, () -> policy);
      var registry = new GangRegistry(() -> policy);
      watcher = new LedgerWatcher(client, ledger, () -> policy).alsoTell(registry::current, registry::gone);
      var planning = new GangPlanning(decider, ledger, watcher::nodes, registry);
      gate = new GangGate(registry, planning, () -> policy, Duration.ofSeconds(60));
      binder = new PodBinder(client, ledger, decider, leader, () -> policy, Clock.systemUTC(), Duration.ofSeconds(30));
      watcher.start();
      coordinator = new GangCoordinator(client, registry, planning, ledger, leader, Clock.systemUTC(),
          new GangCoordinator.Timing(Duration.ofSeconds(60), Duration.ofSeconds(30)),
          new GangEvents(client, Clock.systemUTC()), new GangMetrics(new SimpleMeterRegistry())).start();
    }

    @Override
    public void close() {
      coordinator.close();
      watcher.close();
    }
  }

  /**
   * kube-scheduler's queue for the pods of this bench: new pods at once; a refused pod again after
   * its backoff, or, when {@code requeueOnUpdate}, as soon as both its backoff has passed and the
   * pod was updated (a pod in the unschedulable set moves to the backoff queue on an update).
   */
  private static final class SchedulerStandIn implements AutoCloseable {
    private final KubernetesClient client;
    private final Replica replica;
    private final DelayQueue<Attempt> queue = new DelayQueue<>();
    private final Map<String, Integer> failures = new ConcurrentHashMap<>();
    private final Map<String, Long> bound = new ConcurrentHashMap<>();
    private final Map<String, Long> backoffUntil = new ConcurrentHashMap<>();
    private final Thread loop;
    private final io.fabric8.kubernetes.client.informers.SharedIndexInformer<Pod> pods;

    SchedulerStandIn(KubernetesClient client, Replica replica) {
      this.client = client;
      this.replica = replica;
      pods = client.pods().inNamespace(NS).inform(new ResourceEventHandler<>() {
        @Override
        public void onAdd(Pod pod) {
          queue.add(new Attempt(pod.getMetadata().getName(), System.nanoTime()));
        }

        @Override
        public void onUpdate(Pod old, Pod pod) {
          var name = pod.getMetadata().getName();
          var unschedulable = failures.containsKey(name) && !bound.containsKey(name) && pod.getSpec().getNodeName() == null;
          if (unschedulable && queue.stream().noneMatch(a -> a.pod.equals(name))) {
            queue.add(new Attempt(name, Math.max(System.nanoTime(), backoffUntil.getOrDefault(name, 0L))));
          }
        }

        @Override
        public void onDelete(Pod pod, boolean unknown) {}
      });
      loop = new Thread(this::schedule, "scheduler-stand-in");
      loop.start();
    }

    int bound(String job) {
      return (int) bound.keySet().stream().filter(p -> p.startsWith(job + "-")).count();
    }

    long lastBind(String job) {
      return bound.entrySet().stream().filter(e -> e.getKey().startsWith(job + "-")).mapToLong(Map.Entry::getValue).max().orElse(0);
    }

    private void schedule() {
      try {
        while (!Thread.currentThread().isInterrupted()) {
          var attempt = queue.take();
          if (bound.containsKey(attempt.pod)) {
            continue;
          }
          var pod = client.pods().inNamespace(NS).withName(attempt.pod).get();
          var names = new ArrayList<>(replica.ledger.nodes());
          var filtered = replica.gate.filter(pod, names).orElseGet(() -> replica.decider.filter(GpuAsk.of(pod, replica.policy), names));
          if (filtered.passed().isEmpty()) {
            var n = failures.merge(attempt.pod, 1, Integer::sum);
            var backoff = Math.min(MAX_BACKOFF.toNanos(), INITIAL_BACKOFF.toNanos() << Math.min(n - 1, 10));
            backoffUntil.put(attempt.pod, System.nanoTime() + backoff);
            var now = client.pods().inNamespace(NS).withName(attempt.pod).get();
            if (!now.getMetadata().getResourceVersion().equals(pod.getMetadata().getResourceVersion())) {
              queue.add(new Attempt(attempt.pod, System.nanoTime() + backoff)); // updated while tried: replayed
            }
            continue;
          }
          var node = filtered.passed().get(0);
          var error = replica.binder.bind(new BindRequest(NS, attempt.pod, pod.getMetadata().getUid(), node));
          if (error.isEmpty()) {
            bound.put(attempt.pod, System.nanoTime());
          } else {
            queue.add(new Attempt(attempt.pod, System.nanoTime() + INITIAL_BACKOFF.toNanos()));
          }
        }
      } catch (InterruptedException stop) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public void close() throws InterruptedException {
      loop.interrupt();
      loop.join();
      pods.close();
    }

    private record Attempt(String pod, long at) implements Delayed {
      @Override
      public long getDelay(TimeUnit unit) {
        return unit.convert(at - System.nanoTime(), TimeUnit.NANOSECONDS);
      }

      @Override
      public int compareTo(Delayed other) {
        return Long.compare(at, ((Attempt) other).at);
      }
    }
  }
}
