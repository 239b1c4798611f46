package io.gpuadmission.teamquota;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.NodeEligibility;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.preemption.PodFacts;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.preemption.PodRequeue;
import io.gpuadmission.quota.QuotaTree;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * What team quotas need from kube-scheduler's queue that the extender alone cannot get, on the
 * placement leader. kube-scheduler runs its own filters before it asks the extender: when every
 * node is full by its count (NodeResourcesFit: {@code Insufficient nvidia.com/gpu}) the extender's
 * filter, where reclaim starts, is never called, and kube-scheduler's preemption finds no victim of
 * lower priority. So the pods kube-scheduler marked unschedulable ({@code PodScheduled} False,
 * reason {@code Unschedulable}; the pod informer's GPU pods) are looked at here, as they change and
 * every {@code period}: one of a leaf under its min goes to {@link QuotaReclaimer#waiting} with the
 * nodes it may go to, whose victims' deletion then requeues it in kube-scheduler, and one the
 * extender would place now is requeued (kube-scheduler may have given up on it before the room
 * came, for reasons it cannot see: a held room let go, a quota freed). And a tree change
 * (a raised max, a new leaf, a lowered max; quotas switched on or off) is a change kube-scheduler
 * cannot see: the unschedulable pods of every namespace of the old or the new tree are requeued
 * ({@link PodRequeue}), so that the extender's filter answers for them now, with the new tree, and
 * not after kube-scheduler's 5-minute flush.
 */
public final class QuotaReclaimSweep implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(QuotaReclaimSweep.class);

  private final Supplier<List<Pod>> gpuPods;
  private final QuotaReclaimer reclaimer;
  private final QuotaGate gate;
  private final PlacementDecider decider;
  private final GpuLedger ledger;
  private final PodFactsIndex facts;
  private final Supplier<GpuPolicy> policies;
  private final LeaderGate leader;
  private final PodRequeue requeue;
  private final Duration period;
  private final Clock clock;
  private final RequeueBackoff backoff;
  private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "quota-reclaim-sweep"));
  private final AtomicBoolean sweepDue = new AtomicBoolean();
  /** The namespaces of the tree in force at the last look (none without a tree or with quotas off). */
  private volatile Set<String> treeNamespaces = Set.of();

  public QuotaReclaimSweep(
      Supplier<List<Pod>> gpuPods, QuotaReclaimer reclaimer, QuotaGate gate, PlacementDecider decider, GpuLedger ledger, PodFactsIndex facts,
      Supplier<GpuPolicy> policies, LeaderGate leader, PodRequeue requeue, Duration period, Clock clock) {
    this.gpuPods = gpuPods;
    this.reclaimer = reclaimer;
    this.gate = gate;
    this.decider = decider;
    this.ledger = ledger;
    this.facts = facts;
    this.policies = policies;
    this.leader = leader;
    this.requeue = requeue;
    this.period = period;
    this.clock = clock;
    // Up to kube-scheduler's own flush of unschedulable pods: waiting longer would never be needed.
    this.backoff = new RequeueBackoff(period, Duration.ofMinutes(5));
  }

  public QuotaReclaimSweep start() {
    treeNamespaces = namespaces(gate.tree());
    loop.scheduleWithFixedDelay(this::sweep, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  /** A GPU pod as the informer has it now: one kube-scheduler just found unschedulable is looked at at once. */
  public void pod(Pod pod) {
    if (unplaced(pod) && sweepDue.compareAndSet(false, true)) {
      execute(() -> {
        sweepDue.set(false);
        sweep();
      });
    }
  }

  /** The tree in force changed (or quotas were switched on or off): requeue the pods it may concern. */
  public void treeChanged() {
    var now = namespaces(gate.tree());
    var concerned = new HashSet<>(treeNamespaces);
    concerned.addAll(now);
    treeNamespaces = now;
    if (!concerned.isEmpty()) {
      execute(() -> requeueIn(concerned));
    }
  }

  /**
   * Each unplaced pod of a quota leaf that the extender would place now (room on some node it may
   * go to, and its quota admits it) is requeued, with {@link RequeueBackoff}: what made the room
   * (victims gone while kube-scheduler had given up on the pod, room reclaim held for it let go, a
   * pod of its team gone) may be nothing kube-scheduler sees as a reason to try it again before its
   * 5-minute flush. Any other goes to reclaim with the nodes refused for want of GPUs, unless
   * kube-scheduler's preemption nominated it (it is making room for it there).
   */
  void sweep() {
    var tree = gate.tree();
    if (!leader.leading() || tree.isEmpty()) {
      return;
    }
    var policy = policies.get();
    var nodes = List.copyOf(new java.util.TreeSet<>(ledger.nodes()));
    var fitting = new HashSet<String>();
    for (var pod : gpuPods.get()) {
      if (!unplaced(pod) || tree.get().leafOf(pod.getMetadata().getNamespace()).isEmpty()) {
        continue;
      }
      var meta = pod.getMetadata();
      var ask = GpuAsk.of(pod, policy);
      try {
        var eligibility = NodeEligibility.of(pod, policy);
        var filtered = decider.filter(ask, eligibility, nodes, facts, PodFacts.priority(pod), meta.getUid());
        if (!filtered.passed().isEmpty() && gate.refusal(meta.getNamespace(), meta.getUid(), ask).isEmpty()) {
          fitting.add(meta.getUid());
          requeueIfDue(pod);
        } else if (!nominated(pod) || reclaimer.makingRoomFor(meta.getUid())) {
          // A pod nominated by kube-scheduler's preemption is left to it; one nominated by reclaim
          // is looked at again, so that its room stays held while its victims still terminate.
          // As filter would answer: the nodes refused for want of GPUs, among those the pod may go
          // to. A node the ledger finds room on now is one kube-scheduler refused for another reason
          // (CPU, ports, a count of its own): evicting pods on the GPUs would not place the pod there.
          reclaimer.waiting(pod, ask, () -> decider.eligibleAmong(eligibility, filtered.failed().keySet()));
        }
      } catch (RuntimeException e) {
        LOG.warnf(e, "reclaim for pod %s/%s could not be tried", meta.getNamespace(), meta.getName());
      }
    }
    backoff.retain(fitting);
  }

  private void requeueIfDue(Pod pod) {
    var known = facts.facts(pod.getMetadata().getUid());
    if (known.isEmpty() || !backoff.take(known.get().uid(), clock.instant())) {
      return;
    }
    try {
      if (requeue.requeue(known.get(), live -> true)) {
        LOG.debugf("pending pod %s fits now: asked kube-scheduler to try it again", known.get().pod());
      }
    } catch (KubernetesClientException e) {
      LOG.infof("could not requeue pending pod %s, which fits now (%s); kube-scheduler tries it again at its next cluster event",
          known.get().pod(), e.getMessage());
    }
  }

  /** kube-scheduler's preemption, or a reclaim, nominated the pod to a node: room is being made there. */
  private static boolean nominated(Pod pod) {
    return pod.getStatus() != null && pod.getStatus().getNominatedNodeName() != null && !pod.getStatus().getNominatedNodeName().isEmpty();
  }

  private void requeueIn(Set<String> namespaces) {
    if (!leader.leading()) {
      return;
    }
    var requeued = 0;
    for (var pod : gpuPods.get()) {
      if (!unplaced(pod) || !namespaces.contains(pod.getMetadata().getNamespace())) {
        continue;
      }
      var known = facts.facts(pod.getMetadata().getUid());
      try {
        if (known.isPresent() && requeue.requeue(known.get(), live -> true)) {
          requeued++;
        }
      } catch (KubernetesClientException e) {
        LOG.infof("could not requeue pending pod %s after the quota tree changed (%s); kube-scheduler tries it again at its next cluster event",
            known.get().pod(), e.getMessage());
      }
    }
    if (requeued > 0) {
      LOG.infof("the quota tree changed: asked kube-scheduler to try %d pending pod%s of its namespaces again", requeued, requeued == 1 ? "" : "s");
    }
  }

  /** Pending, not being deleted, and found unschedulable by kube-scheduler's last attempt. */
  private static boolean unplaced(Pod pod) {
    return pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() == null && pod.getSpec() != null
        && (pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()) && PodRequeue.unschedulable(pod);
  }

  private static Set<String> namespaces(Optional<QuotaTree> tree) {
    return tree.map(t -> Set.copyOf(t.namespaces())).orElse(Set.of());
  }

  private void execute(Runnable task) {
    try {
      loop.execute(task);
    } catch (RejectedExecutionException closing) {
      // shutting down
    }
  }

  @Override
  public void close() {
    loop.shutdownNow();
  }
}
