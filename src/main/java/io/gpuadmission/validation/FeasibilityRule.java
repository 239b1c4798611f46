package io.gpuadmission.validation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.cluster.GpuNode;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.PodSelectors;
import java.math.BigDecimal;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Refuses what no node can ever satisfy: more whole GPUs than any node of the target pool has,
 * more GPU memory than one GPU of the pool has (gpushare puts a pod on one GPU), or a GPU model no
 * node has. Without known GPU nodes it cannot tell, and only warns.
 */
public final class FeasibilityRule implements PodRule {
  static final String NAME = "feasibility";
  /** gpushare counts GPU memory in whole GiB, rounding the node's MiB down. */
  private static final long MIB_PER_GIB = 1024;

  @Override
  public void check(PodSubject s, ValidationResult result) {
    var policy = s.policy();
    var pod = s.pod();
    var whole = wholeGpus(pod, Set.of(policy.topology().resourceName(), policy.topology().wholeGpuResource()));
    var share = PodResources.limitSum(pod, policy.sharedMemory().resourceName());
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
      result.refuse(
          NAME,
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
    if (whole.signum() > 0) {
      var biggest = candidates.stream().max(Comparator.comparingInt(GpuNode::gpuCount)).get();
      if (whole.compareTo(BigDecimal.valueOf(biggest.gpuCount())) > 0) {
        result.refuse(
            NAME,
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
          result.refuse(
              NAME,
              "spec.containers.resources.limits." + policy.sharedMemory().resourceName(),
              s.prefix() + "asks " + policy.sharedMemory().resourceName() + "=" + share.toPlainString() + " but the largest GPU in "
                  + where + " has " + gib + " (" + biggest.get().model().orElse("unknown model") + ", "
                  + biggest.get().memoryMiB().getAsLong() + "MiB); a GPU-memory share is placed on one GPU: ask for at most " + gib);
        }
      }
    }
  }

  /** Regular containers run together (sum); init containers run one at a time (max). */
  static BigDecimal wholeGpus(Pod pod, Set<String> names) {
    var regular = BigDecimal.ZERO;
    for (var name : names) {
      regular = regular.add(PodResources.limitSum(pod, name));
    }
    var init = BigDecimal.ZERO;
    var spec = pod.getSpec();
    if (spec.getInitContainers() != null) {
      for (var c : spec.getInitContainers()) {
        var sum = BigDecimal.ZERO;
        for (var name : names) {
          sum = sum.add(PodResources.amount(c, name));
        }
        init = init.max(sum);
      }
    }
    return regular.max(init);
  }

  private static String models(List<GpuNode> nodes) {
    var names = new TreeSet<String>();
    nodes.forEach(n -> n.model().ifPresent(names::add));
    return String.join(", ", names);
  }
}
