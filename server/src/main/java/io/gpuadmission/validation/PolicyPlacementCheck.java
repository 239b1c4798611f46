package io.gpuadmission.validation;

import io.gpuadmission.cluster.GpuNode;
import io.gpuadmission.policy.FeasibilityPolicy.OnInfeasible;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * Tells whoever applies a policy whose {@code sharedMemory.placement} no node of a share pool
 * carries that every share pod sent there would be refused (or stay Pending): the policy itself is
 * valid, and labelling the nodes may come next, so it is a warning, not a refusal.
 */
public final class PolicyPlacementCheck {
  private PolicyPlacementCheck() {}

  public static List<String> warnings(GpuPolicy policy, List<GpuNode> nodes) {
    var placement = policy.sharedMemory().placement();
    if (placement.isEmpty()) {
      return List.of();
    }
    var label = policy.nodeLabels().placement();
    var value = placement.get().label();
    var warnings = new ArrayList<String>();
    for (var pool : new String[] {policy.sharedMemory().isolatedPool(), policy.sharedMemory().selfLimitedPool()}) {
      var inPool = nodes.stream().filter(GpuNode::hasGpus).filter(n -> n.pool().filter(pool::equals).isPresent()).toList();
      if (inPool.isEmpty() || inPool.stream().anyMatch(n -> n.placement().filter(value::equals).isPresent())) {
        continue;
      }
      var counts = new TreeMap<String, Integer>();
      inPool.forEach(n -> counts.merge(n.placement().orElse("none"), 1, Integer::sum));
      var there = new ArrayList<String>();
      counts.forEach((v, c) -> there.add(v + " on " + c + (c == 1 ? " node" : " nodes")));
      var outcome = policy.feasibility().onInfeasible() == OnInfeasible.WARN ? "admitted and stay Pending" : "refused";
      warnings.add(
          "gpu-admission: sharedMemory.placement is " + value + " but no GPU node of pool \"" + pool + "\" carries " + label + "="
              + value + " (there: " + String.join(", ", there) + "): its share pods will be " + outcome
              + " until one does; label the nodes that should place shares so");
    }
    return warnings;
  }
}
