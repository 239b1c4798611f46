package io.gpuadmission.preemption;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The extender's preempt verb ({@code ProcessPreemption}): kube-scheduler sends the nodes its own
 * dry run found victims on, and the extender may drop nodes and change each node's victims, which
 * must be pods on that node. kube-scheduler chose its victims by node totals; they stay (its own
 * filters need them gone, as upstream's test extender keeps them), a gang member among them brings
 * the rest of its gang, and the pods that free one GPU the pod fits on are added
 * ({@link PreemptionSearch}). A node where that cannot be done is dropped: kube-scheduler refuses
 * a node answered with no victims, and would evict for nothing.
 */
public final class CandidateReview {
  private final PreemptionSearch search;
  private final GpuPreemptor preemptor;
  private final Supplier<GpuPolicy> policies;

  /** One node's victims (pod UIDs) and the PodDisruptionBudgets they violate. */
  public record Candidate(List<String> victims, long pdbViolations) {
    public Candidate {
      victims = List.copyOf(victims);
    }
  }

  public CandidateReview(PreemptionSearch search, GpuPreemptor preemptor, Supplier<GpuPolicy> policies) {
    this.search = search;
    this.preemptor = preemptor;
    this.policies = policies;
  }

  /**
   * The candidates kube-scheduler may act on, in the order proposed; never a node without victims
   * (kube-scheduler refuses the whole answer for one).
   */
  public Map<String, Candidate> review(Pod pod, Map<String, Candidate> proposed) {
    var ask = GpuAsk.of(pod, policies.get());
    if (ask.kind() == GpuAsk.Kind.NONE) {
      // No GPU of ours at stake (kube-scheduler sends none such): its candidates stand.
      var kept = new LinkedHashMap<String, Candidate>();
      proposed.forEach((node, candidate) -> {
        if (!candidate.victims().isEmpty()) {
          kept.put(node, candidate);
        }
      });
      return kept;
    }
    var uid = pod.getMetadata().getUid() == null ? "" : pod.getMetadata().getUid();
    var reviewed = new LinkedHashMap<String, Candidate>();
    if (!PreemptionRules.neverPreempts(pod) && !preemptor.inProgress(pod)) {
      var self = new PreemptionSearch.Preemptor(uid, pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName(), PodFacts.priority(pod), ask);
      var planned = plannedNode(pod);
      for (var entry : proposed.entrySet()) {
        if (planned.isPresent() && !planned.get().equals(entry.getKey())) {
          continue; // a gang member runs only where its gang's plan put it
        }
        var going = new LinkedHashSet<>(entry.getValue().victims());
        // A planned member's own GPUs are held for it: counted free for it.
        var alsoFree = planned.isPresent() ? Set.of(uid) : Set.<String>of();
        var extra = search.onNode(self, entry.getKey(), union(going, alsoFree));
        extra.ifPresent(
            found -> {
              var all = new ArrayList<>(going);
              found.victims().forEach(v -> {
                if (!going.contains(v.uid())) {
                  all.add(v.uid());
                }
              });
              if (!all.isEmpty()) {
                reviewed.put(entry.getKey(), new Candidate(all, entry.getValue().pdbViolations() + found.pdbViolations()));
              }
            });
      }
    }
    if (reviewed.isEmpty()) {
      preemptor.kubeSchedulerCannot(uid);
    } else {
      preemptor.kubeSchedulerPreempts(uid);
    }
    return reviewed;
  }

  /** The node a gang member's plan holds GPUs on; empty for a pod placed on its own. */
  private Optional<String> plannedNode(Pod pod) {
    var job = TopologyJob.of(pod, policies.get().topology()).filter(TopologyJob::placedTogether);
    if (job.isEmpty() || GpuAsk.of(pod, policies.get()).kind() != GpuAsk.Kind.WHOLE) {
      return Optional.empty();
    }
    return Optional.of(MemberPlan.of(pod).map(MemberPlan::node).orElse(""));
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    if (b.isEmpty()) {
      return a;
    }
    var out = new LinkedHashSet<>(a);
    out.addAll(b);
    return out;
  }
}
