package io.gpuadmission.cli;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.cluster.ClusterSnapshot;
import io.gpuadmission.cluster.LedgerFeed;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.gang.GangKey;
import io.gpuadmission.gang.GangMember;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangRegistry;
import io.gpuadmission.gang.GangStatus;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.placement.NodeEligibility;
import io.gpuadmission.placement.Nominations;
import io.gpuadmission.placement.PlacementDecider.Choice;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.placement.TargetWorkload;
import io.gpuadmission.pod.NodeConstraints;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.preemption.PodFacts;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Where each pending GPU pod would go now, decided by the extender's own code: the GPU ledger
 * built from the given nodes, pods and unhealthy-GPU ConfigMaps through the service's
 * {@link LedgerFeed}; complete gangs planned whole by the leader's {@link GangPlanning} and held
 * in the ledger as the leader holds them; each pod then through kube-scheduler's node selection
 * ({@link NodeConstraints}: nodeSelector, required node affinity, taints, cordon), the extender's
 * filter ({@link GangGate} for gang members, else {@link PlacementDecider#filter} with the pod's
 * {@link NodeEligibility}, which also counts each node's allocatable GPU resources), the node it
 * ranks first, and bind's choice of GPUs, which the next pod then finds taken. Pods already
 * pending in the cluster go first (they are older), then the new ones in input order. CPU,
 * memory, pod affinity and other pods' ports are kube-scheduler's own business and not modelled.
 */
final class Placer {
  /** A pod to place, and where it comes from ("" for the cluster's own pending pods). */
  record Candidate(Pod pod, String source) {}

  /**
   * Where a pod goes: a node and GPUs (whole GPUs, or one GPU and {@code memory} GiB of it), or why
   * nowhere, per node as the extender and kube-scheduler's node selection say.
   */
  record Answer(
      String namespace,
      String name,
      String source,
      String ask,
      Optional<GangKey> gang,
      Optional<String> node,
      List<Integer> gpus,
      long memory,
      String why,
      Map<String, String> nodes) {

    boolean placed() {
      return node.isPresent();
    }
  }

  private final GpuPolicy policy;
  private final ClusterSnapshot cluster;
  private final GpuLedger ledger = new GpuLedger();
  private final GangRegistry gangs;
  private final LedgerFeed feed;
  private final PlacementDecider decider;
  private final GangPlanning planning;
  private final GangGate gate;
  private final Clock clock;
  /** Every pod by UID, as it is now (plans written on gang members). */
  private final Map<String, Pod> pods = new HashMap<>();

  Placer(GpuPolicy policy, ClusterSnapshot cluster, Duration gangPlanTimeout, Clock clock) {
    this.policy = policy;
    this.cluster = cluster;
    this.clock = clock;
    this.gangs = new GangRegistry(() -> policy);
    this.feed = new LedgerFeed(ledger, () -> policy).alsoTell(gangs::current, gangs::gone);
    var byName = new HashMap<String, Node>();
    cluster.nodeObjects().forEach(n -> byName.put(n.getMetadata().getName(), n));
    // The node informer's part: the extender judges eligibility on the Node objects it has.
    this.decider = new PlacementDecider(ledger, () -> policy, () -> TargetWorkload.NONE, name -> Optional.ofNullable(byName.get(name)));
    this.planning = new GangPlanning(decider, ledger, cluster::nodeObjects, gangs);
    this.gate = new GangGate(gangs, planning, () -> policy, gangPlanTimeout);
  }

  /** Answers for the cluster's pending GPU pods, then for {@code created}, which are created now. */
  List<Answer> place(List<Candidate> created) {
    cluster.feed(feed);
    cluster.pods().forEach(p -> pods.put(p.getMetadata().getUid(), p));
    var order = new ArrayList<Candidate>();
    cluster.pods().stream().filter(this::pendingGpuPod).sorted(Comparator.comparing(Placer::createdAt)).forEach(p -> order.add(new Candidate(p, "")));
    for (var candidate : created) {
      pods.put(candidate.pod().getMetadata().getUid(), candidate.pod());
      feed.pod(candidate.pod());
      // A pod written with spec.nodeName is bound by its author, never by kube-scheduler.
      if (pendingGpuPod(candidate.pod())) {
        order.add(candidate);
      }
    }
    planGangs();
    var answers = new ArrayList<Answer>();
    for (var candidate : order) {
      var pod = pods.get(candidate.pod().getMetadata().getUid());
      answers.add(answer(pod, candidate.source()));
    }
    return answers;
  }

  private boolean pendingGpuPod(Pod pod) {
    var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    var unbound = pod.getSpec() == null || pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty();
    return unbound && feed.keeps(pod) && !PodClaims.finished(pod) && pod.getMetadata().getDeletionTimestamp() == null && !"Failed".equals(phase);
  }

  private static String createdAt(Pod pod) {
    var created = pod.getMetadata().getCreationTimestamp();
    return (created == null ? "" : created) + "/" + pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  /**
   * What the leader does for every complete gang whose pending members are not all planned: one
   * plan for them, held in the ledger and written on them (so the filter reads it from the pods).
   * A plan the members already carry is kept, as a new leader keeps the plan it finds.
   */
  private void planGangs() {
    for (var gang : gangs.gangs()) {
      if (!(gangs.status(gang, Optional.empty()) instanceof GangStatus.Complete complete) || complete.unbound().isEmpty()
          || complete.unbound().stream().allMatch(m -> m.plan().isPresent())) {
        continue;
      }
      complete.unbound().forEach(m -> ledger.unplan(m.uid())); // a partial plan is released and made again
      if (!(planning.plan(gang, (GangStatus.Complete) gangs.status(gang, Optional.empty())) instanceof GangPlanning.Outcome.Planned planned)) {
        continue; // the filter tells each member why
      }
      var planId = MemberPlan.idAt(clock.instant());
      for (var member : complete.unbound()) {
        var place = planned.byMember().get(member.uid());
        ledger.plan(GpuClaim.planned(member.uid(), member.pod(), place.node(), place.gpus(), Instant.MAX), Instant.MAX);
        var annotated = withPlan(pods.get(member.uid()), new MemberPlan(planId, place.node(), place.gpus()));
        pods.put(member.uid(), annotated);
        feed.pod(annotated);
      }
    }
  }

  private static Pod withPlan(Pod pod, MemberPlan plan) {
    var copy = new io.fabric8.kubernetes.api.model.PodBuilder(pod).build();
    var annotations = copy.getMetadata().getAnnotations() == null ? new LinkedHashMap<String, String>() : new LinkedHashMap<>(copy.getMetadata().getAnnotations());
    annotations.putAll(plan.annotations());
    copy.getMetadata().setAnnotations(annotations);
    return copy;
  }

  private Answer answer(Pod pod, String source) {
    var meta = pod.getMetadata();
    var ask = GpuAsk.of(pod, policy);
    var gang = GangMember.of(pod, policy).map(GangMember::gang);
    var names = cluster.nodeObjects().stream().map(n -> n.getMetadata().getName()).toList();
    var gated = gate.filter(pod, names);
    if (gated.isPresent()) {
      var passed = gated.get().passed();
      var plan = MemberPlan.of(pod);
      if (!passed.isEmpty() && plan.isPresent()) {
        ledger.reserve(GpuClaim.reserved(meta.getUid(), key(pod), passed.get(0), plan.get().gpus(), 0));
        return new Answer(meta.getNamespace(), meta.getName(), source, ask.toString(), gang, Optional.of(passed.get(0)), plan.get().gpus(), 0, "", Map.of());
      }
      var reasons = new TreeMap<>(gated.get().failed());
      reasons.putAll(gated.get().unresolvable());
      var why = reasons.isEmpty() ? "no nodes in the cluster given" : reasons.values().iterator().next();
      return new Answer(meta.getNamespace(), meta.getName(), source, ask.toString(), gang, Optional.empty(), List.of(), 0, why, reasons);
    }
    var reasons = new TreeMap<String, String>();
    var candidates = new ArrayList<String>();
    var constraints = NodeConstraints.of(pod.getSpec());
    for (Node node : cluster.nodeObjects()) {
      var refusal = constraints.refusal(node);
      if (refusal.isPresent()) {
        reasons.put(node.getMetadata().getName(), refusal.get());
      } else {
        candidates.add(node.getMetadata().getName());
      }
    }
    // The extender's filter, as ExtenderService calls it: node selection and allocatable GPU resources again, then the GPUs.
    var eligibility = NodeEligibility.of(pod, policy);
    var filtered = decider.filter(ask, eligibility, candidates, Nominations.NONE, PodFacts.priority(pod), meta.getUid() == null ? "" : meta.getUid());
    reasons.putAll(filtered.failed());
    reasons.putAll(filtered.unresolvable());
    var best = decider.best(ask, filtered.passed());
    if (best.isEmpty()) {
      var why = names.isEmpty() ? "no nodes in the cluster given" : "no node can take it";
      return new Answer(meta.getNamespace(), meta.getName(), source, ask.toString(), gang, Optional.empty(), List.of(), 0, why, reasons);
    }
    var choice = decider.choose(ask, eligibility, best.get(), List.of());
    if (choice instanceof Choice.Refused refused) {
      reasons.put(best.get(), refused.reason());
      return new Answer(meta.getNamespace(), meta.getName(), source, ask.toString(), gang, Optional.empty(), List.of(), 0, refused.reason(), reasons);
    }
    var gpus = ((Choice.Chosen) choice).gpus();
    var memory = ask.kind() == GpuAsk.Kind.SHARE ? ask.memory() : 0;
    ledger.reserve(GpuClaim.reserved(meta.getUid(), key(pod), best.get(), gpus, memory));
    return new Answer(meta.getNamespace(), meta.getName(), source, ask.toString(), gang, best, gpus, memory, "", Map.of());
  }

  private static String key(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }
}
