package io.gpuadmission.validation;

import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.cluster.GpuNode;
import io.gpuadmission.mutation.GpuModelRule;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.PodSelectors;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.FeasibilityPolicy.OnInfeasible;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Refuses what no known node can take: more whole GPUs of a resource than any node of the target
 * pool offers (the pool a resource targets: nodes whose allocatable lists it, or whose pool label
 * serves it where allocatable does not say), more GPU memory than one GPU of the pool has (gpushare
 * places a pod on one GPU), a GPU model no node has, a minimum GPU memory no model has, or a share
 * placement ({@code ack.node.gpu.placement}) no node of the pool carries. A model asked by
 * required node affinity is judged as a nodeSelector's ({@link ModelAffinityCheck}). The pod's ask is its
 * effective request (init containers included). Policy {@code feasibility.onInfeasible:
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
    var whole = wholeResources(policy).stream().map(r -> PodResources.effective(pod, r)).reduce(BigDecimal.ZERO, BigDecimal::add);
    var share = PodResources.effective(pod, policy.sharedMemory().resourceName());
    var model = PodSelectors.nodeSelectorValue(pod, policy.nodeLabels().model());
    if (whole.signum() == 0 && share.signum() == 0 && model.isEmpty()) {
      return;
    }
    var asksGpus = whole.signum() > 0 || share.signum() > 0;
    if (asksGpus && ModelAffinityCheck.contradicts(s, result)) {
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
      if (policy.feasibility().scalesFromZero(model.get())) {
        result.warn("gpu-admission: " + s.prefix() + "asks GPU model \"" + model.get() + "\", which no node has now; admitted as policy"
            + " feasibility.scaleFromZeroModels lists it (a node pool that scales from zero): it stays Pending until the cluster"
            + " autoscaler adds such a node");
        return;
      }
      infeasible(
          s,
          result,
          "spec.nodeSelector." + policy.nodeLabels().model(),
          s.prefix() + "asks GPU model \"" + model.get() + "\" but no node has it (known models: " + models(gpuNodes)
              + "); use one of those, or, if its node pool scales from zero, list it in policy feasibility.scaleFromZeroModels");
      return;
    }
    if (asksGpus && !ModelAffinityCheck.fits(s, result, gpuNodes)) {
      return;
    }
    if (whole.signum() > 0 && !minimumMemoryFits(s, result, gpuNodes)) {
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
    // A pod asking a share and whole GPUs is mixed-gpu-resources' refusal: no pool offers both.
    for (var resource : share.signum() > 0 ? List.<String>of() : wholeResources(policy)) {
      var asked = PodResources.effective(pod, resource);
      if (asked.signum() > 0 && !wholeGpusFit(s, result, resource, asked, gpuNodes, candidates, where)) {
        return;
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

  /**
   * A whole-GPU pod's {@code gpu-admission.io/min-gpu-memory} that no GPU model of the cluster has
   * (the mutation could pin it to no model and left it unpinned), or that the models the pod
   * selects (its nodeSelector, its namespace's default or model annotation pinned by the mutation,
   * or In lists of its required node affinity) all lack: refused like a model no node has. A
   * selection that leaves the model open or names a model no node has now (a pool at zero: its
   * memory is not known), or a value that is no quantity, is not judged here.
   */
  private static boolean minimumMemoryFits(PodSubject s, ValidationResult result, List<GpuNode> gpuNodes) {
    var policy = s.policy();
    var pod = s.pod();
    var annotations = pod.getMetadata() == null ? null : pod.getMetadata().getAnnotations();
    var annotation = policy.gpuModel().minMemoryAnnotation();
    var minimum = annotations == null ? null : annotations.get(annotation);
    if (minimum == null) {
      return true;
    }
    var mib = GpuModelCatalog.minimumMiB(minimum);
    var catalog = GpuModelCatalog.of(gpuNodes);
    if (mib.isEmpty() || catalog.isEmpty()) {
      return true;
    }
    var enough = catalog.modelsWithAtLeast(mib.getAsLong(), policy.gpuModel().memoryTolerancePercent());
    // A selection that leaves the model open (Exists, NotIn) is judged as no selection: the minimum alone.
    if (PodSelectors.selectsByLabel(pod, policy.nodeLabels().model())
        && PodSelectors.selectedValues(pod, policy.nodeLabels().model()).isPresent()) {
      return selectedModelsFit(s, result, catalog, enough, annotation, minimum);
    }
    if (!enough.isEmpty()) {
      return true;
    }
    var largest = catalog.largest().get();
    infeasible(
        s,
        result,
        "metadata.annotations." + annotation,
        s.prefix() + "asks " + annotation + " " + minimum + " but no GPU model in the cluster has that much per GPU (the most: "
            + largest.getKey() + ", " + largest.getValue() + "MiB); lower it or remove the annotation");
    return false;
  }

  /**
   * The pod's own choice of models against its minimum: refused when every model it selects is
   * known and none has the minimum, naming each model and its memory per GPU.
   */
  private static boolean selectedModelsFit(
      PodSubject s, ValidationResult result, GpuModelCatalog catalog, List<String> enough, String annotation, String minimum) {
    var label = s.policy().nodeLabels().model();
    var selected = PodSelectors.selectedValues(s.pod(), label);
    if (selected.isEmpty() || selected.get().isEmpty()
        || !catalog.smallestMemoryMiB().keySet().containsAll(selected.get()) || selected.get().stream().anyMatch(enough::contains)) {
      return true;
    }
    var sorted = selected.get().stream().sorted().toList();
    var memory = catalog.smallestMemoryMiB();
    var named = namedModel(s).filter(sorted::equals).isPresent();
    String chosen;
    if (named) {
      // Two annotations of its own contradict each other: the mutation pinned the model it names.
      chosen = "the GPU model it names (" + s.policy().gpuModel().modelAnnotation() + "), " + sorted.get(0) + ", has "
          + memory.get(sorted.get(0)) + "MiB per GPU";
    } else if (sorted.size() == 1) {
      chosen = "the GPU model it selects (" + label + "), " + sorted.get(0) + ", has " + memory.get(sorted.get(0)) + "MiB per GPU";
    } else {
      var each = sorted.stream().map(m -> m + " (" + memory.get(m) + "MiB per GPU)").toList();
      chosen = "the GPU models it selects (" + label + "), " + String.join(", ", each.subList(0, each.size() - 1)) + " and "
          + each.get(each.size() - 1) + ", have less";
    }
    var largest = catalog.largest().get();
    var fix = enough.isEmpty()
        ? "no GPU model in the cluster has that much (the most: " + largest.getKey() + ", " + largest.getValue() + "MiB); lower it or remove the annotation"
        : (named ? "name" : "select") + " a model that has it (" + String.join(", ", enough) + ") or lower the minimum";
    infeasible(s, result, "metadata.annotations." + annotation, s.prefix() + "asks " + annotation + " " + minimum + " but " + chosen + "; " + fix);
    return false;
  }

  /** The model the pod names in its model annotation, as a node label spells it, when it selects it by nodeSelector too. */
  private static Optional<List<String>> namedModel(PodSubject s) {
    var annotations = s.pod().getMetadata() == null ? null : s.pod().getMetadata().getAnnotations();
    var named = annotations == null ? null : annotations.get(s.policy().gpuModel().modelAnnotation());
    if (named == null) {
      return Optional.empty();
    }
    var model = GpuModelRule.normalise(named);
    return PodSelectors.nodeSelectorValue(s.pod(), s.policy().nodeLabels().model()).filter(model::equals).map(List::of);
  }

  /** The whole-GPU resources: the topology pool's ({@code aliyun.com/gpu}) and the others' ({@code nvidia.com/gpu}). */
  private static List<String> wholeResources(GpuPolicy policy) {
    var topology = policy.topology();
    return topology.resourceName().equals(topology.wholeGpuResource())
        ? List.of(topology.resourceName())
        : List.of(topology.resourceName(), topology.wholeGpuResource());
  }

  /**
   * Whether {@code asked} whole GPUs of {@code resource} fit a node of {@code candidates} (the
   * pod's pool and model) that offers that resource; refuses (or warns) when not. No GPU node of
   * the cluster offering the resource at all is a pool at zero: a warning only.
   */
  private static boolean wholeGpusFit(
      PodSubject s, ValidationResult result, String resource, BigDecimal asked, List<GpuNode> gpuNodes, List<GpuNode> candidates, String where) {
    var policy = s.policy();
    var offering = candidates.stream().filter(n -> offered(n, resource, policy) > 0).toList();
    if (offering.isEmpty()) {
      var elsewhere = gpuNodes.stream().filter(n -> offered(n, resource, policy) > 0).toList();
      if (elsewhere.isEmpty()) {
        result.warn("gpu-admission: no GPU node known that offers " + resource + "; the pod waits until one joins");
      } else {
        infeasible(
            s,
            result,
            "spec.containers.resources",
            s.prefix() + "asks " + asked.toPlainString() + " " + resource + " but no node in " + where + " offers " + resource
                + " (nodes offering it: " + describe(elsewhere) + "); select such nodes (another GPU model or pool), or ask for the GPU"
                + " resource the selected nodes offer");
      }
      return false;
    }
    var biggest = offering.stream().max(Comparator.comparingLong(n -> offered(n, resource, policy))).get();
    var most = offered(biggest, resource, policy);
    if (asked.compareTo(BigDecimal.valueOf(most)) > 0) {
      infeasible(
          s,
          result,
          "spec.containers.resources",
          s.prefix() + "asks " + asked.toPlainString() + " whole GPUs (" + resource + ") but the largest node offering " + resource + " in "
              + where + " has " + most + " (" + biggest.name() + "); ask for at most " + most + " per pod and spread the job over more pods");
      return false;
    }
    return true;
  }

  /**
   * How many whole GPUs of {@code resource} a node offers: its {@code status.allocatable} where it
   * lists the resource (ACK lists the other scheduling modes' resources at 0); else what its pool
   * label says: the topology pool serves the topology resource, a share pool no whole GPU, any other
   * pool (or none) its GPUs. A node whose allocatable is not known so never refuses a pod that its
   * pool could take.
   */
  static long offered(GpuNode node, String resource, GpuPolicy policy) {
    var listed = node.allocatable().get(resource);
    if (listed != null) {
      return listed;
    }
    var pool = node.pool().orElse("");
    var shares = policy.sharedMemory();
    if (pool.equals(shares.isolatedPool()) || pool.equals(shares.selfLimitedPool())) {
      return 0;
    }
    if (pool.equals(policy.topology().pool())) {
      return resource.equals(policy.topology().resourceName()) ? node.gpuCount() : 0;
    }
    return node.gpuCount();
  }

  /** {@code pool "default", model Tesla-T4}: where nodes are, by pool label and GPU model. */
  private static String describe(List<GpuNode> nodes) {
    var pools = new TreeSet<String>();
    nodes.forEach(n -> pools.add(n.pool().map(p -> "\"" + p + "\"").orElse("none")));
    var models = new TreeSet<String>();
    nodes.forEach(n -> n.model().ifPresent(models::add));
    return (pools.size() == 1 ? "pool " : "pools ") + String.join(", ", pools)
        + (models.isEmpty() ? "" : (models.size() == 1 ? "; model " : "; models ") + String.join(", ", models));
  }

  /** A refusal, or under policy {@code feasibility.onInfeasible: warn} the same words as a warning. */
  static void infeasible(PodSubject s, ValidationResult result, String path, String message) {
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
