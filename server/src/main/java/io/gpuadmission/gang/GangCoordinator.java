package io.gpuadmission.gang;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.gang.GangMetrics.State;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.MemberPlan;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jboss.logging.Logger;

/**
 * Makes and keeps the gang plans, on the placement leader only (inside its {@link LeaderGate}, so
 * two replicas never hold two plans for one gang): when a gang's last member exists, one plan for
 * all its pending members, held in the ledger and written on the members (which makes
 * kube-scheduler retry them); a plan whose member is deleted before binding, that is incomplete,
 * whose GPUs were taken or turned unhealthy, whose node is gone or cordoned, or that is not bound
 * in time, is released and remade; a pod that leaves its gang gives its plan back. Bound members
 * keep their GPUs. Runs on a change of any member and every second.
 */
public final class GangCoordinator implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(GangCoordinator.class);

  /** How long a plan may wait for its binds; how long a fresh plan holds before the informer shows it. */
  public record Timing(Duration planTimeout, Duration unseenFor) {}

  private record Written(MemberPlan plan, Instant until, Set<Integer> hostPorts) {}

  private final GangRegistry registry;
  private final GangPlanning planning;
  private final GpuLedger ledger;
  private final LeaderGate gate;
  private final Clock clock;
  private final Timing timing;
  private final GangEvents events;
  private final GangMetrics metrics;
  private final Map<GangKey, String> reported = new ConcurrentHashMap<>();
  /** Nodes a gang's timed-out plan could not be bound on, left out of its next plan. */
  private final Map<GangKey, Set<String>> avoid = new ConcurrentHashMap<>();
  /** Plans this replica wrote, by member UID, until the informer shows them on the members. */
  private final Map<String, Written> written = new ConcurrentHashMap<>();
  private final PlacementTimes times = new PlacementTimes();
  private final PlanPatcher patcher;
  private final AtomicBoolean pending = new AtomicBoolean();
  private ScheduledExecutorService loop;
  private volatile GangPreemption preemption = GangPreemption.NONE;

  /**
   * Preemption for a complete gang that does not fit (a gang's members are refused as unresolvable,
   * so kube-scheduler never preempts for them): only the leader asks it, on every pass.
   */
  public interface GangPreemption {
    GangPreemption NONE = (gang, complete) -> false;

    /** True when victims were chosen for the gang's plan, now or earlier and still terminating. */
    boolean preempt(GangKey gang, GangStatus.Complete complete);
  }

  /** Lets a complete gang that outranks pods holding GPUs preempt them as a unit. */
  public GangCoordinator preemptWith(GangPreemption preemption) {
    this.preemption = preemption;
    return this;
  }

  public GangCoordinator(
      KubernetesClient client,
      GangRegistry registry,
      GangPlanning planning,
      GpuLedger ledger,
      LeaderGate gate,
      Clock clock,
      Timing timing,
      GangEvents events,
      GangMetrics metrics) {
    this.patcher = new PlanPatcher(client);
    this.registry = registry;
    this.planning = planning;
    this.ledger = ledger;
    this.gate = gate;
    this.clock = clock;
    this.timing = timing;
    this.events = events;
    this.metrics = metrics;
  }

  /** Reconciles every second and soon after any member changes. */
  public GangCoordinator start() {
    loop = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "gang-planner"));
    loop.scheduleWithFixedDelay(this::reconcileSafely, 1, 1, TimeUnit.SECONDS);
    registry.onChange(() -> {
      if (!loop.isShutdown() && pending.compareAndSet(false, true)) {
        try {
          // Soon, not at once: the members of a job are often created in one burst.
          loop.schedule(() -> {
            pending.set(false);
            reconcileSafely();
          }, 20, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
          pending.set(false);
        }
      }
    });
    return this;
  }

  @Override
  public void close() {
    if (loop != null) {
      loop.shutdownNow();
    }
  }

  /** A Binding this replica created (see PodBinder#onBound): when the gang is all bound, its time is measured. */
  public void memberBound(String uid, Instant at) {
    times.bound(uid, at);
  }

  private void reconcileSafely() {
    try {
      reconcile();
    } catch (RuntimeException e) {
      LOG.warnf(e, "gang planning pass failed; retried in a second");
    }
  }

  /** One pass over every gang: counts states everywhere, acts only on the leader. */
  public synchronized void reconcile() {
    var counts = new EnumMap<State, Integer>(State.class);
    var seen = new HashSet<GangKey>();
    for (var gang : registry.gangs()) {
      var members = registry.members(gang);
      if (members.isEmpty()) {
        continue;
      }
      seen.add(gang);
      var status = registry.status(gang, Optional.empty());
      var state = gate.whileLeading(() -> act(gang, status)).orElseGet(() -> observe(gang, status));
      state.ifPresent(s -> counts.merge(s, 1, Integer::sum));
    }
    gate.whileLeading(() -> {
      registry.orphans().forEach(this::releaseOrphan);
      return true;
    });
    reported.keySet().retainAll(seen);
    avoid.keySet().retainAll(seen);
    var alive = new HashSet<String>();
    seen.forEach(g -> registry.members(g).forEach(m -> alive.add(m.uid())));
    written.keySet().retainAll(alive);
    times.retain(seen, alive);
    metrics.counts(counts);
  }

  /** A follower's view: the same states, from the members' annotations. */
  private Optional<State> observe(GangKey gang, GangStatus status) {
    return GangStates.of(status, () -> planning.plan(gang, (GangStatus.Complete) status));
  }

  private Optional<State> act(GangKey gang, GangStatus status) {
    if (status instanceof GangStatus.Waiting waiting) {
      release(gang, registry.members(gang), "a member is gone (" + waiting.exist() + " of " + waiting.expected() + " members exist)", false);
      return Optional.of(State.WAITING);
    }
    if (status instanceof GangStatus.Disagreeing disagreeing) {
      release(gang, registry.members(gang), disagreeing.reason(), false);
      report(gang, registry.members(gang), "GangDisagreement", GangReasons.disagreeing(gang, disagreeing));
      return Optional.of(State.DISAGREEING);
    }
    var complete = (GangStatus.Complete) status;
    if (complete.unbound().isEmpty()) {
      times.placed(gang, complete).ifPresent(metrics::placed);
      avoid.remove(gang);
      return Optional.empty();
    }
    var now = clock.instant();
    var marked = complete.unbound().stream().filter(m -> m.planMarked() || written.containsKey(m.uid())).toList();
    if (!marked.isEmpty()) {
      var plan = currentPlan(complete, now);
      var sick = plan.flatMap(p -> PlanHealth.whyNot(complete.unbound(), m -> planOf(m, now), ledger, planning));
      if (plan.isPresent() && sick.isEmpty() && !now.isAfter(plan.get().madeAt().plus(timing.planTimeout()))) {
        return Optional.of(State.PLANNED);
      }
      if (sick.isPresent()) {
        release(gang, marked, sick.get(), false);
      } else if (plan.isPresent()) {
        // kube-scheduler did not follow the plan (a reason the planner does not see: CPU, memory,
        // ports of pods that are no gang members): the next plan leaves those nodes out.
        var refused = avoid.computeIfAbsent(gang, g -> ConcurrentHashMap.newKeySet());
        marked.forEach(m -> planOf(m, now).ifPresent(p -> refused.add(p.node())));
        release(gang, marked, "its members were not all bound within " + timing.planTimeout().toSeconds() + "s", true);
      } else {
        release(gang, marked, "the plan was incomplete or its GPUs were taken", false);
      }
    }
    var outcome = planning.plan(gang, complete, avoid.getOrDefault(gang, Set.of()), writtenPorts());
    if (outcome instanceof GangPlanning.Outcome.NoRoom && avoid.containsKey(gang)) {
      // Without the nodes it could not be bound on it does not fit: try them again rather than never.
      avoid.remove(gang);
      outcome = planning.plan(gang, complete, Set.of(), writtenPorts());
    }
    if (outcome instanceof GangPlanning.Outcome.NoRoom noRoom) {
      if (!preemption.preempt(gang, complete)) {
        report(gang, complete.unbound(), "GangWaiting", GangReasons.noRoom(gang, complete, noRoom));
      }
      return Optional.of(State.NO_ROOM);
    }
    return Optional.of(write(gang, complete, (GangPlanning.Outcome.Planned) outcome, now) ? State.PLANNED : State.AWAITING_PLAN);
  }

  /**
   * The plan the pending members share, when every one carries it and the ledger holds its GPUs
   * for it (planned, or already being bound on them).
   */
  private Optional<MemberPlan> currentPlan(GangStatus.Complete complete, Instant now) {
    var first = planOf(complete.unbound().get(0), now);
    if (first.isEmpty()) {
      return Optional.empty();
    }
    for (var member : complete.unbound()) {
      var plan = planOf(member, now);
      if (plan.isEmpty() || !plan.get().planId().equals(first.get().planId())) {
        return Optional.empty();
      }
      var held = ledger.claim(member.uid());
      if (held.isEmpty() || !held.get().node().equals(plan.get().node()) || !held.get().gpus().equals(plan.get().gpus())) {
        return Optional.empty();
      }
    }
    return first;
  }

  /**
   * The member's plan: as this replica has just written it, until the informer shows that plan on
   * the pod (the members' updates arrive one by one, and a pod may still show a plan released
   * before); else as the pod shows it.
   */
  private Optional<MemberPlan> planOf(GangMember member, Instant now) {
    var mine = written.get(member.uid());
    if (mine != null && now.isAfter(mine.until())) {
      written.remove(member.uid());
      mine = null;
    }
    if (mine == null) {
      return member.plan();
    }
    if (member.plan().isPresent() && member.plan().get().planId().equals(mine.plan().planId())) {
      written.remove(member.uid());
    }
    return Optional.of(mine.plan());
  }

  /** Host ports of the members this replica has just planned, by node, until the pods show the plans. */
  private Map<String, Set<Integer>> writtenPorts() {
    var out = new java.util.HashMap<String, Set<Integer>>();
    written.values().forEach(w -> out.computeIfAbsent(w.plan().node(), n -> new java.util.HashSet<>()).addAll(w.hostPorts()));
    return out;
  }

  /** A member this replica is binding now (or has just bound): its plan is no longer the gang's to release. */
  private boolean binding(GangMember member) {
    var held = ledger.claim(member.uid());
    return held.isPresent() && held.get().phase() != GpuClaim.Phase.PLANNED;
  }

  /** Holds the places in the ledger and writes them on the members; undone entirely if any step fails. */
  private boolean write(GangKey gang, GangStatus.Complete complete, GangPlanning.Outcome.Planned planned, Instant now) {
    var planId = MemberPlan.idAt(now);
    var members = complete.unbound();
    var plans = new ArrayList<MemberPlan>(members.size());
    for (int i = 0; i < members.size(); i++) {
      var member = members.get(i);
      var place = planned.byMember().get(member.uid());
      plans.add(new MemberPlan(planId, place.node(), place.gpus()));
      if (!ledger.plan(GpuClaim.planned(member.uid(), member.pod(), place.node(), place.gpus(), Instant.MAX), now.plus(timing.unseenFor()))) {
        members.subList(0, i).forEach(m -> ledger.unplan(m.uid()));
        LOG.debugf("%s: planned GPUs were taken while planning; planned again next pass", gang);
        return false;
      }
    }
    for (int i = 0; i < members.size(); i++) {
      written.put(members.get(i).uid(), new Written(plans.get(i), now.plus(timing.unseenFor()), members.get(i).hostPorts()));
      var error = patcher.write(members.get(i), plans.get(i));
      if (error.isPresent()) {
        LOG.warnf("%s: writing the plan on %s failed (%s); released and planned again", gang, members.get(i).pod(), error.get());
        for (int j = 0; j <= i; j++) {
          written.remove(members.get(j).uid());
          patcher.release(members.get(j));
        }
        members.forEach(m -> ledger.unplan(m.uid()));
        return false;
      }
    }
    var message = GangReasons.planned(gang, planned.places());
    LOG.infof("%s", message);
    members.forEach(m -> events.normal(m, "GangPlanned", message));
    reported.put(gang, message);
    metrics.planned();
    return true;
  }

  private void release(GangKey gang, List<GangMember> members, String why, boolean timedOut) {
    var planned = members.stream().filter(m -> (m.planMarked() || written.containsKey(m.uid())) && !m.bound() && !binding(m)).toList();
    if (planned.isEmpty()) {
      return;
    }
    var message = gang.quoted() + ": plan released: " + why;
    LOG.infof("%s", message);
    for (var member : planned) {
      written.remove(member.uid());
      ledger.unplan(member.uid());
      patcher.release(member);
      events.normal(member, "GangPlanReleased", message);
    }
    if (timedOut) {
      metrics.timedOut();
    } else {
      metrics.released();
    }
  }

  /**
   * A pod that carries a plan but is no gang member any more (its job label removed, the policy's
   * job label changed): its planned GPUs go back.
   */
  private void releaseOrphan(GangRegistry.Orphan orphan) {
    LOG.infof("plan released on %s/%s: it is no member of a gang any more", orphan.namespace(), orphan.name());
    written.remove(orphan.uid());
    ledger.unplan(orphan.uid());
    patcher.release(orphan.namespace(), orphan.name(), orphan.uid());
    metrics.released();
  }

  /** An Event on the members once per change of what the gang is told. */
  private void report(GangKey gang, List<GangMember> members, String reason, String message) {
    if (!message.equals(reported.put(gang, message))) {
      members.forEach(m -> events.warning(m, reason, message));
    }
  }

}
