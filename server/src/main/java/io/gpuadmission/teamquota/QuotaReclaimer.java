package io.gpuadmission.teamquota;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.HeldRoom;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.preemption.DisruptionBudgets;
import io.gpuadmission.preemption.PodFacts;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.preemption.PreemptionSearch;
import io.gpuadmission.quota.QuotaDecision;
import io.gpuadmission.quota.QuotaPod;
import io.gpuadmission.quota.ReclaimPlan;
import io.gpuadmission.quota.ReclaimPlanner;
import io.gpuadmission.quota.RunningPod;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Reclaim: a pending pod of a quota leaf under its min that no node has room for gets room from
 * pods of leaves that borrow (above their min), whatever their priority: kube-scheduler's own
 * preemption only takes pods of lower priority, and cannot see quotas. Started from filter (every
 * node refused for want of GPUs, or the quota refused it only because siblings borrow the parent's
 * max), and for a pod kube-scheduler could not place without asking the extender (every node full
 * by its own count: {@link #waiting}), on the placement leader only, at most once per pod per
 * cool-down. Attempts run one after the other, and one waits until the pod informer shows what the
 * last ones did (victims terminating, the pod nominated), and the GPUs of pods nominated to a node
 * are held for them there: else two pods waiting together would both take the room one victim
 * frees. The victims come from the quota core's {@link ReclaimPlanner} (never a leaf at or under
 * its min; fewest PodDisruptionBudget violations, as preemption weighs the same budgets, then fewest
 * victims, lowest priority, youngest; gangs whole) among the pods the ledger holds GPUs for, checked
 * on the ledger's GPUs; each is evicted as preemption evicts, with an Event naming the quota that
 * took its GPUs back, and the pod is nominated to the node. Pods terminating already count as gone:
 * while they alone make room, nothing more is evicted and the pod waits for them.
 */
public final class QuotaReclaimer implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(QuotaReclaimer.class);

  private final QuotaGate gate;
  private final QuotaLedgerBook books;
  private final GpuLedger ledger;
  private final PodFactsIndex facts;
  private final PlacementDecider decider;
  private final DisruptionBudgets budgets;
  private final LeaderGate leader;
  private final QuotaEvictions evictions;
  private final Clock clock;
  private final Duration coolDown;
  private final Counts counts;
  private final Map<String, Instant> lastTried = new ConcurrentHashMap<>();
  /** Pods an attempt is queued or running for, by UID. */
  private final Set<String> attempting = ConcurrentHashMap.newKeySet();
  /** Reclaims this replica made lately, by the reclaiming pod's UID, until the informer shows them. */
  private final Map<String, Made> made = new ConcurrentHashMap<>();
  private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "quota-reclaim"));

  /** A reclaim this replica made: its victims, the node the pod was nominated to, and when. */
  private record Made(List<String> victims, String node, Instant at) {}

  /** How soon an attempt looks again while the informer has not shown this replica's last reclaim. */
  private static final Duration UNSEEN_RETRY = Duration.ofMillis(50);

  /** Counts each reclaim made and the pods it evicted. */
  interface Counts {
    Counts NONE = victims -> {};

    void reclaimed(int victims);
  }

  /** {@code evictions}: null without a cluster (nothing is ever reclaimed). */
  QuotaReclaimer(
      QuotaGate gate, QuotaLedgerBook books, GpuLedger ledger, PodFactsIndex facts, PlacementDecider decider, DisruptionBudgets budgets,
      LeaderGate leader, QuotaEvictions evictions, Clock clock, Duration coolDown, Counts counts) {
    this.gate = gate;
    this.books = books;
    this.ledger = ledger;
    this.facts = facts;
    this.decider = decider;
    this.budgets = budgets;
    this.leader = leader;
    this.evictions = evictions;
    this.clock = clock;
    this.coolDown = coolDown;
    this.counts = counts;
  }

  /** A reclaimer that never acts (with {@link QuotaGate#none}). */
  public static QuotaReclaimer none(QuotaGate gate, GpuLedger ledger, PodFactsIndex facts, PlacementDecider decider, LeaderGate leader) {
    return new QuotaReclaimer(gate, null, ledger, facts, decider, new DisruptionBudgets(), leader, null, Clock.systemUTC(), Duration.ZERO, Counts.NONE);
  }

  /**
   * Filter refused every node of {@code nodes} for want of GPUs. True when the pod's leaf is under
   * its min with it, so reclaim is tried first: an attempt follows, and {@code otherwise} (the
   * ordinary preemption) runs when no borrower's pods make room and no pods terminating already do.
   */
  public boolean refused(Pod pod, GpuAsk ask, List<String> nodes, Runnable otherwise) {
    if (pending(pod, ask).isEmpty()) {
      return false;
    }
    tryLater(pod, ask, nodes, otherwise);
    return true;
  }

  /**
   * kube-scheduler could not place the pod and never asked the extender (its own filters found every
   * node full): {@code nodes} gives where the pod may go, asked only for a pod whose leaf is under
   * its min with it and that was not tried within the cool-down. An attempt follows; no ordinary
   * preemption (kube-scheduler's own has run).
   */
  public void waiting(Pod pod, GpuAsk ask, java.util.function.Supplier<List<String>> nodes) {
    if (leader.leading() && !triedLately(pod.getMetadata().getUid(), clock.instant()) && pending(pod, ask).isPresent()) {
      tryLater(pod, ask, nodes.get(), () -> {});
    }
  }

  private boolean triedLately(String uid, Instant now) {
    var last = uid == null ? null : lastTried.get(uid);
    return last != null && now.isBefore(last.plus(coolDown));
  }

  /** The quota refused the pod; when only because other leaves borrow its parent's max, reclaim follows. */
  public void quotaRefused(Pod pod, GpuAsk ask, QuotaDecision.Refused refused, List<String> nodes) {
    if (refused.leafUnderMin() && pending(pod, ask).isPresent()) {
      tryLater(pod, ask, nodes, () -> {});
    }
  }

  /** The pod as quota sees it, when its leaf stays at or under its min with it; empty otherwise. */
  private Optional<QuotaPod> pending(Pod pod, GpuAsk ask) {
    var tree = gate.tree();
    var meta = pod.getMetadata();
    if (evictions == null || tree.isEmpty() || meta == null || meta.getUid() == null || ask.kind() == GpuAsk.Kind.NONE) {
      return Optional.empty();
    }
    var leaf = tree.get().leafOf(meta.getNamespace());
    if (leaf.isEmpty()) {
      return Optional.empty();
    }
    var amounts = QuotaLedgerBook.inTree(tree.get(), io.gpuadmission.placement.QuotaAmounts.of(ask, gate.policy()));
    var book = books.bookWithout(tree.get(), List.of(meta.getUid()));
    if (!book.used(leaf.get()).add(amounts).fitsWithin(leaf.get().min())) {
      return Optional.empty();
    }
    return Optional.of(QuotaPod.of(meta.getUid(), meta.getNamespace(), amounts, PodFacts.priority(pod), Long.MAX_VALUE));
  }

  private void tryLater(Pod pod, GpuAsk ask, List<String> nodes, Runnable otherwise) {
    var uid = pod.getMetadata().getUid();
    if (!leader.leading() || nodes.isEmpty()) {
      return;
    }
    var now = clock.instant();
    if (triedLately(uid, now)) {
      return; // tried lately: its victims may still be terminating, and nothing else is evicted meanwhile
    }
    lastTried.put(uid, now);
    lastTried.values().removeIf(at -> now.isAfter(at.plus(coolDown)));
    attempting.add(uid);
    try {
      loop.execute(() -> attempt(pod, ask, List.copyOf(nodes), otherwise));
    } catch (RejectedExecutionException closing) {
      attempting.remove(uid); // shutting down
    }
  }

  /**
   * Whether reclaim is making room for this pending pod: an attempt is queued or running for it, or
   * the room an attempt freed is held for it. kube-scheduler's priority preemption, asked through
   * the preempt verb right after the filter that started the attempt, or again while the victims
   * terminate, must then take nothing more for it: both would evict for the same pod.
   */
  public boolean makingRoomFor(String uid) {
    return uid != null && (attempting.contains(uid) || facts.holdsRoomFor(uid));
  }

  private void attempt(Pod pod, GpuAsk ask, List<String> nodes, Runnable otherwise) {
    var uid = pod.getMetadata().getUid();
    if (!ownReclaimsSeen()) {
      try {
        loop.schedule(() -> attempt(pod, ask, nodes, otherwise), UNSEEN_RETRY.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException closing) {
        attempting.remove(uid); // shutting down
      }
      return;
    }
    var reclaimed = true;
    try {
      reclaimed = leader.whileLeading(() -> reclaim(pod, ask, nodes)).orElse(true);
    } catch (RuntimeException e) {
      LOG.warnf(e, "reclaim for pod %s/%s failed", pod.getMetadata().getNamespace(), pod.getMetadata().getName());
    } finally {
      attempting.remove(uid);
    }
    if (!reclaimed) {
      otherwise.run();
    }
  }

  private boolean reclaim(Pod pod, GpuAsk ask, List<String> nodes) {
    var pending = pending(pod, ask);
    var tree = gate.tree();
    if (pending.isEmpty() || tree.isEmpty()) {
      return false;
    }
    var uid = pod.getMetadata().getUid();
    var claims = ledger.claims();
    var counted = books.pods(tree.get());
    var going = terminating(claims.keySet());
    // The plan sees the pods terminating already as gone: their usage is off their leaf and its
    // ancestors (the book counts none of them), their GPUs free on their node. So an earlier
    // attempt's victims still terminating after the cool-down are not taken for pods still to evict
    // (that would evict a second pod for the same room, and push the victims' leaf below its min once
    // both are gone), and a plan that needs none means the room is coming: the pod waits.
    // Quota-wide rather than kube-scheduler's rule on the nominated node alone, because a reclaim
    // frees quota as well as GPUs, and a gang victim goes whole, its members terminating on every
    // node it ran on: each of them has left its leaf's usage however far from the pod's node.
    var book = books.bookWithout(tree.get(), Set.of(uid));
    var running = new ArrayList<RunningPod>();
    for (var other : counted.values()) {
      var claim = claims.get(other.uid());
      // Only bound pods that are not going already: a pod being placed has nobody to evict. Only
      // the ledger's: a bound pod it has no claim for counts in its team's usage, but its GPUs are
      // not the ledger's, so evicting it would free nothing the room check below could see.
      if (claim != null && (claim.phase() == GpuClaim.Phase.BOUND || claim.phase() == GpuClaim.Phase.ASSUMED) && facts.facts(other.uid()).isPresent()
          && !going.contains(other.uid()) && !other.uid().equals(uid)) {
        running.add(new RunningPod(other, claim.node()));
      }
    }
    var plan = ReclaimPlanner.plan(
        book, pending.get(), nodes, running, (node, uids) -> fitsAfterRemoving(pod, ask, node, union(uids, going), claims),
        ReclaimAllowance.of(budgets, running, facts::facts));
    if (plan.isEmpty()) {
      LOG.debugf("no reclaim for %s/%s (%s): no borrower's pods make room on the %d nodes it could run on",
          pod.getMetadata().getNamespace(), pod.getMetadata().getName(), ask, nodes.size());
      return false;
    }
    if (plan.get().victims().isEmpty()) {
      return waitsForTerminating(pod, ask, plan.get().node(), claims);
    }
    if (!evictions.stillPending(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), uid)) {
      LOG.debugf("no reclaim for %s/%s: bound or gone meanwhile", pod.getMetadata().getNamespace(), pod.getMetadata().getName());
      return true;
    }
    execute(pod, plan.get());
    return true;
  }

  /**
   * The plan takes no victim on {@code node}. True (the pod waits) when that is only so with the pods
   * terminating gone; false when it fits there now, GPUs and quota alike: then what refused it is
   * none of reclaim's business (another pod's nomination holding the GPUs), and the ordinary
   * preemption decides.
   */
  private boolean waitsForTerminating(Pod pod, GpuAsk ask, String node, Map<String, GpuClaim> claims) {
    var meta = pod.getMetadata();
    if (fitsAfterRemoving(pod, ask, node, Set.of(), claims) && gate.refusal(meta.getNamespace(), meta.getUid(), ask).isEmpty()) {
      return false;
    }
    LOG.debugf("no reclaim for %s/%s (%s): pods terminating already make room on node %s; it waits for them",
        meta.getNamespace(), meta.getName(), ask, node);
    var room = new HeldRoom(node, clock.instant().plus(holdFor()));
    facts.hold(meta.getUid(), room);
    evictions.holdRoom(meta.getNamespace(), meta.getName(), meta.getUid(), room);
    return true;
  }

  /** The uids of {@code uids} whose pods are terminating. */
  private Set<String> terminating(Set<String> uids) {
    var going = new HashSet<String>();
    for (var uid : uids) {
      if (facts.facts(uid).filter(PodFacts::terminating).isPresent()) {
        going.add(uid);
      }
    }
    return going;
  }

  private static Set<String> union(Set<String> some, Set<String> others) {
    if (others.isEmpty()) {
      return some;
    }
    var all = new HashSet<String>(some);
    all.addAll(others);
    return all;
  }

  /**
   * How long the room freed for a pod is held for it: two cool-downs, and again at each attempt that
   * finds it still waiting for its victims (a long termination grace period).
   */
  private Duration holdFor() {
    return coolDown.multipliedBy(2);
  }

  /**
   * Whether the pod informer shows every reclaim this replica made within the cool-down: its
   * victims terminating or gone, and its pod nominated (or bound, or gone).
   */
  private boolean ownReclaimsSeen() {
    var now = clock.instant();
    made.values().removeIf(m -> !now.isBefore(m.at().plus(coolDown)));
    for (var entry : made.entrySet()) {
      var m = entry.getValue();
      if (m.victims().stream().anyMatch(victim -> facts.facts(victim).filter(f -> !f.terminating()).isPresent())) {
        return false;
      }
      if (facts.facts(entry.getKey()).filter(f -> f.node().isEmpty() && !f.terminating() && !m.node().equals(f.nominated())).isPresent()) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether {@code pod} fits {@code node} with the pods of {@code uids} gone, the GPUs of pods
   * nominated there held first (those of no lower priority, as kube-scheduler holds them).
   */
  private boolean fitsAfterRemoving(Pod pod, GpuAsk ask, String node, Set<String> uids, Map<String, GpuClaim> claims) {
    var view = ledger.view(node);
    if (view.isEmpty()) {
      return false;
    }
    var gone = new ArrayList<GpuClaim>();
    for (var uid : uids) {
      var claim = claims.get(uid);
      if (claim != null && claim.node().equals(node)) {
        gone.add(claim);
      }
    }
    var held = facts.heldOn(node, PodFacts.priority(pod), pod.getMetadata().getUid());
    return decider.refusal(ask, node, PreemptionSearch.without(view.get(), gone), held).isEmpty();
  }

  private void execute(Pod pod, ReclaimPlan plan) {
    var who = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    var names = new ArrayList<String>();
    for (var victim : plan.victims()) {
      var known = facts.facts(victim.pod().uid());
      if (known.isEmpty()) {
        continue;
      }
      var message = "quota " + victim.reclaimingQuota() + " took back its GPUs on node " + victim.node() + " for pod " + who
          + " (under its min; quota " + victim.victimQuota() + " was borrowing them)";
      if (evictions.evict(known.get(), message)) {
        names.add(known.get().pod());
      }
    }
    counts.reclaimed(names.size());
    // The room freed is the pod's until it is bound: its GPUs there and its ask in its team's usage,
    // even once kube-scheduler clears the nomination (a retry while the victims still terminate).
    // Held here first (the victims left their team's usage as they were evicted), then written on
    // the pod for every replica and the next leader.
    var room = new HeldRoom(plan.node(), clock.instant().plus(holdFor()));
    facts.hold(pod.getMetadata().getUid(), room);
    made.put(pod.getMetadata().getUid(), new Made(plan.victims().stream().map(v -> v.pod().uid()).toList(), plan.node(), clock.instant()));
    evictions.nominate(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid(), room);
    var quota = plan.victims().get(0).reclaimingQuota();
    evictions.publish(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid(), "Normal", "QuotaReclaiming",
        "quota " + quota + " is under its min: evicted " + String.join(", ", names) + " (borrowing) to free GPUs on node " + plan.node()
            + "; nominated to " + plan.node());
    LOG.infof("quota %s reclaimed for %s: evicted %s on node %s", quota, who, String.join(", ", names), plan.node());
  }

  @Override
  public void close() {
    loop.shutdownNow();
  }
}
