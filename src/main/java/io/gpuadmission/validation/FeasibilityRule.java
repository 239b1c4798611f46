package io.gpuadmission.validation;

import io.gpuadmission.cluster.GpuNode;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.PodSelectors;
import io.gpuadmission.policy.FeasibilityPolicy.OnInfeasible;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Refuses what no known node can take: more whole GPUs than any node of the target pool has, more
 * GPU memory than one GPU of the pool has (gpushare places a pod on one GPU), a GPU model no node
 * has, or a share placement ({@code ack.node.gpu.placement}) no node of the pool carries. The pod's
 * ask is its effective request (init containers included). Policy {@code feasibility.onInfeasible:
 * warn} admits such pods with the same words as a warning. Without known GPU nodes, or none in the
 * pod's pool (an autoscaled pool at zero), it cannot tell, and only warns.
 */
public final class FeasibilityRule implements PodRule {
  static final String NAME = "feasibility";
  /** gpushare counts GPU memory in whole GiB, rounding the node's MiB down. */
  private static final long MIB_PER_GIB = 1024;

  @Override
  public void check(PodSubject s, ValidationResult result) {
    var policy = s.policy();
    var pod = s.pod();
    var whole =
        PodResources.effective(pod, policy.topology().resourceName()).add(PodResources.effective(pod, policy.topology().wholeGpuResource()));
    var share = PodResources.effective(pod, policy.sharedMemory().resourceName());
    var model = PodSelectors.nodeSelectorValue(pod, policy.nodeLabels().model());
    if (whole.signum() == 0 && share.signum() == 0 && model.isEmpty()) {
      return;
    }
    var gpuNodes = s.cluster().nodes().stream().filter(GpuNode::hasGpus).toList();
    if (gpuNodes.isEmpty()) {
      result.warn(
          "gpu-admission: no GPU nodes known yet; could not check that "
              + (s.called().equals("pod") ? "this pod fits" : s.called() + " pods fit")
              + " a node");
      return;
    }
    if (model.isPresent() && gpuNodes.stream().noneMatch(n -> n.model().filter(model.get()::equals).isPresent())) {
      infeasible(
          s,
          result,
          "spec.nodeSelector." + policy.nodeLabels().model(),
          s.prefix() + "asks GPU model \"" + model.get() + "\" but no node has it (known models: " + models(gpuNodes)
              + "); use one of those");
      return;
    }
    var pool = PodSelectors.nodeSelectorValue(pod, policy.nodeLabels().pool());
    var candidates =
        gpuNodes.stream()
            .filter(n -> pool.isEmpty() || n.pool().filter(pool.get()::equals).isPresent())
            .filter(n -> model.isEmpty() || n.model().filter(model.get()::equals).isPresent())
            .toList();
    var where = (pool.map(p -> "pool \"" + p + "\"").orElse("the cluster")) + model.map(m -> " with model " + m).orElse("");
    if (candidates.isEmpty()) {
      result.warn("gpu-admission: no GPU node known in " + where + "; the pod waits until one joins");
      return;
    }
    var placement = PodSelectors.nodeSelectorValue(pod, policy.nodeLabels().placement());
    if (placement.isPresent() && candidates.stream().noneMatch(n -> n.placement().equals(placement))) {
      infeasible(s, result, "spec.nodeSelector." + policy.nodeLabels().placement(), placementMessage(s, placement.get(), pool, where, candidates));
      return;
    }
    if (whole.signum() > 0) {
      var biggest = candidates.stream().max(Comparator.comparingInt(GpuNode::gpuCount)).get();
      if (whole.compareTo(BigDecimal.valueOf(biggest.gpuCount())) > 0) {
        infeasible(
            s,
            result,
            "spec.containers.resources",
            s.prefix() + "asks " + whole.toPlainString() + " whole GPUs but the largest node in " + where + " has "
                + biggest.gpuCount() + " (" + biggest.name() + "); ask for at most " + biggest.gpuCount()
                + " per pod and spread the job over more pods");
      }
    }
    if (share.signum() > 0) {
      var biggest =
          candidates.stream().filter(n -> n.memoryMiB().isPresent()).max(Comparator.comparingLong(n -> n.memoryMiB().getAsLong()));
      if (biggest.isPresent()) {
        var gib = biggest.get().memoryMiB().getAsLong() / MIB_PER_GIB;
        if (share.compareTo(BigDecimal.valueOf(gib)) > 0) {
          infeasible(
              s,
              result,
              "spec.containers.resources.limits." + policy.sharedMemory().resourceName(),
              s.prefix() + "asks " + policy.sharedMemory().resourceName() + "=" + share.toPlainString() + " but the largest GPU in "
                  + where + " has " + gib + " (" + biggest.get().model().orElse("unknown model") + ", "
                  + biggest.get().memoryMiB().getAsLong() + "MiB); a GPU-memory share is placed on one GPU: ask for at most " + gib);
        }
      }
    }
  }

  /** A refusal, or under policy {@code feasibility.onInfeasible: warn} the same words as a warning. */
  private static void infeasible(PodSubject s, ValidationResult result, String path, String message) {
    if (s.policy().feasibility().onInfeasible() == OnInfeasible.WARN) {
      result.warn(
          "gpu-admission: " + message + " (admitted as policy feasibility.onInfeasible is warn: it stays Pending until a node can take it)");
    } else {
      result.refuse(NAME, path, message);
    }
  }

  /**
   * The pod selects a share placement no node of its pool carries (the policy's {@code
   * sharedMemory.placement} writes it into every share pod): which placements the pool has, and
   * the ways out — label nodes, change the policy, or pick a placement the pool has.
   */
  private static String placementMessage(PodSubject s, String placement, Optional<String> pool, String where, List<GpuNode> candidates) {
    var policy = s.policy();
    var label = policy.nodeLabels().placement();
    var fromPolicy = policy.sharedMemory().placement().filter(p -> p.label().equals(placement)).isPresent();
    var counts = new TreeMap<String, Integer>();
    candidates.forEach(n -> counts.merge(n.placement().orElse("none"), 1, Integer::sum));
    var there = new ArrayList<String>();
    counts.forEach((value, count) -> there.add(value + " on " + count + (count == 1 ? " node" : " nodes")));
    var labelled = new TreeSet<String>();
    candidates.forEach(n -> n.placement().ifPresent(labelled::add));
    var fixes = new ArrayList<String>();
    fixes.add("label " + (pool.isPresent() ? "the pool's nodes " : "GPU nodes ") + label + "=" + placement);
    if (fromPolicy) {
      fixes.add("set sharedMemory.placement to " + (labelled.isEmpty() ? "null" : "a placement the pool has or to null"));
    }
    if (!labelled.isEmpty()) {
      fixes.add("choose one with nodeSelector " + label + ": " + labelled.first());
    } else if (!fromPolicy) {
      fixes.add("remove the pod's nodeSelector " + label);
    }
    return s.prefix() + "selects " + label + "=" + placement + (fromPolicy ? " (the policy's sharedMemory.placement)" : "")
        + " but no GPU node in " + where + " carries it (there: " + String.join(", ", there) + "); " + alternatives(fixes);
  }

  /** {@code "a, b, or c"}; {@code "a, or b"}; {@code "a"}. */
  private static String alternatives(List<String> fixes) {
    if (fixes.size() == 1) {
      return fixes.get(0);
    }
    return String.join(", ", fixes.subList(0, fixes.size() - 1)) + ", or " + fixes.get(fixes.size() - 1);
  }

  private static String models(List<GpuNode> nodes) {
    var names = new TreeSet<String>();
    nodes.forEach(n -> n.model().ifPresent(names::add));
    return String.join(", ", names);
  }
}
