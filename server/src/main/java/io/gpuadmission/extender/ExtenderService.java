package io.gpuadmission.extender;

import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.NodeListBuilder;
import io.gpuadmission.cluster.SchedulerNodes;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.placement.ChoicesInFlight;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.NodeEligibility;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.WorkloadLearner;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.placement.Nominations;
import io.gpuadmission.preemption.CandidateReview;
import io.gpuadmission.preemption.PodFacts;
import io.gpuadmission.preemption.GpuPreemptor;
import io.gpuadmission.teamquota.QuotaGate;
import io.gpuadmission.teamquota.QuotaReclaimer;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashSet;
import java.util.List;

/** Turns extender arguments into decisions and decisions into the answer's form. */
@ApplicationScoped
public class ExtenderService {
  private final PlacementDecider decider;
  private final GangGate gangs;
  private final PolicyStore policies;
  private final GpuLedger ledger;
  private final GpuPreemptor preemptor;
  private final CandidateReview review;
  private final Nominations nominations;
  private final WorkloadLearner learner;
  private final ChoicesInFlight choices;
  private final QuotaGate quotas;
  private final QuotaReclaimer reclaimer;

  public ExtenderService(
      PlacementDecider decider,
      GangGate gangs,
      PolicyStore policies,
      GpuLedger ledger,
      GpuPreemptor preemptor,
      CandidateReview review,
      Nominations nominations,
      WorkloadLearner learner,
      ChoicesInFlight choices,
      QuotaGate quotas,
      QuotaReclaimer reclaimer) {
    this.quotas = quotas;
    this.reclaimer = reclaimer;
    this.choices = choices;
    this.nominations = nominations;
    this.decider = decider;
    this.gangs = gangs;
    this.policies = policies;
    this.ledger = ledger;
    this.preemptor = preemptor;
    this.review = review;
    this.learner = learner;
  }

  /**
   * A gang member's answer comes from its gang (planned node only, or why it waits); any other pod's
   * from the ledger. A pod refused everywhere, where evicting pods could make room, is told to the
   * preemptor (kube-scheduler's own preemption cannot see GPUs). A filter starts the pod's new
   * scheduling cycle: its last cycle's choice in flight goes, and the only node passed is its next.
   */
  ExtenderWire.FilterResult filter(ExtenderWire.Args args) {
    learnSentNodes(args);
    var names = ExtenderCodec.names(args);
    var ask = learnAsk(args, names);
    choices.scheduling(uid(args.pod()));
    var result = gangs.filter(args.pod(), names).orElse(null);
    if (result == null) {
      var pod = args.pod();
      var eligibility = eligibility(args);
      var quota = quotas.refusal(pod.getMetadata().getNamespace(), uid(pod), ask);
      if (quota.isPresent()) {
        // No node helps while the team quota refuses: unresolvable, so kube-scheduler does not
        // preempt for it; a leaf under its min gets room by reclaim instead.
        result = QuotaRefusals.everyNode(names, quota.get().reason());
        reclaimer.quotaRefused(pod, ask, quota.get(), decider.eligibleAmong(eligibility, names));
      } else {
        result = decider.filter(ask, eligibility, names, nominations, PodFacts.priority(pod), uid(pod));
        choices.filtered(asked(pod, ask, eligibility), result.passed());
        if (result.passed().isEmpty() && !result.failed().isEmpty()) {
          // Only nodes the pod may go to: evicting pods elsewhere would never place it. A pod of a
          // quota leaf under its min takes borrowed GPUs back first, whatever their priority, and is
          // preempted for as any other pod when no borrower's pods make room.
          var nodes = decider.eligibleAmong(eligibility, result.failed().keySet());
          if (!reclaimer.refused(pod, ask, nodes, () -> preemptor.refused(pod, nodes))) {
            preemptor.refused(pod, nodes);
          }
        }
      }
    }
    if (args.nodeNames() != null) {
      return new ExtenderWire.FilterResult(null, result.passed(), result.failed(), result.unresolvable(), "");
    }
    return new ExtenderWire.FilterResult(passedNodes(args.nodes(), result.passed()), null, result.failed(), result.unresolvable(), "");
  }

  /** kube-scheduler's preemption candidates, with the victims that free a GPU. */
  byte[] preempt(ExtenderCodec.Preemption args) {
    return ExtenderCodec.preemptionAnswer(review.review(args.pod(), args.candidates()));
  }

  /** Scores; the node given the top score is held for the pod until its bind (a choice in flight). */
  List<PlacementDecider.NodeScore> prioritize(ExtenderWire.Args args) {
    learnSentNodes(args);
    var names = ExtenderCodec.names(args);
    var ask = learnAsk(args, names);
    return gangs.prioritize(args.pod(), names).orElseGet(() -> {
      var pod = args.pod();
      // Its own earlier choice must not count against it (a scheduler calling prioritize alone).
      choices.scheduling(uid(pod));
      var eligibility = eligibility(args);
      var scores = decider.prioritize(ask, eligibility, names);
      choices.prioritized(asked(pod, ask, eligibility), scores);
      return scores;
    });
  }

  private static ChoicesInFlight.Asked asked(io.fabric8.kubernetes.api.model.Pod pod, GpuAsk ask, NodeEligibility eligibility) {
    var meta = pod.getMetadata();
    return new ChoicesInFlight.Asked(uid(pod), meta.getNamespace() + "/" + meta.getName(), ask, eligibility, PodFacts.priority(pod));
  }

  /**
   * The pod's ask, which FGD's learned workload counts from the pod's first filter on: a burst of
   * new pods weighs in before the informer shows them. Only a request about nodes of this cluster
   * counts: warm-up's samples, and requests naming no node the ledger knows, are nobody's workload.
   */
  private GpuAsk learnAsk(ExtenderWire.Args args, List<String> names) {
    var ask = GpuAsk.of(args.pod(), policies.current());
    if (ask.kind() != GpuAsk.Kind.NONE && names.stream().anyMatch(name -> ledger.capacity(name).isPresent())) {
      learner.asked(args.pod().getMetadata().getUid(), ask);
    }
    return ask;
  }

  /** The pod's own node selection and GPU resources, judged again on every node (kube-scheduler has, but must not be contradicted). */
  private NodeEligibility eligibility(ExtenderWire.Args args) {
    var eligibility = NodeEligibility.of(args.pod(), policies.current());
    return args.nodes() == null ? eligibility : eligibility.judgingSent(args.nodes().getItems());
  }

  private static String uid(io.fabric8.kubernetes.api.model.Pod pod) {
    return pod.getMetadata() == null || pod.getMetadata().getUid() == null ? "" : pod.getMetadata().getUid();
  }

  /** Full Node objects (nodeCacheCapable: false): GPUs of nodes our informer has not shown yet. */
  private void learnSentNodes(ExtenderWire.Args args) {
    if (args.nodes() != null && args.nodes().getItems() != null) {
      SchedulerNodes.learnUnseen(ledger, args.nodes().getItems(), policies.current().nodeLabels());
    }
  }

  /** The Node objects that passed, in the order sent (nodeCacheCapable: false). */
  private static NodeList passedNodes(NodeList sent, List<String> passed) {
    var keep = new HashSet<>(passed);
    return new NodeListBuilder()
        .withItems(sent.getItems().stream().filter(n -> keep.contains(n.getMetadata().getName())).toList())
        .build();
  }
}
