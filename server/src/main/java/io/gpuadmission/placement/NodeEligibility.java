package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.pod.NodeConstraints;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.policy.GpuPolicy;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Whether a pod may go to a node at all, before any GPU is counted: its own node selection
 * (nodeSelector, required node affinity, tolerations, cordon) and the GPU resources the node
 * offers ({@code status.allocatable}: a share pod needs a node with {@code aliyun.com/gpu-mem}, a
 * whole-GPU pod one with its whole-GPU resource). kube-scheduler checks these before it asks the
 * extender; filter and bind check them again so that the extender never says yes where the
 * scheduler would say no (a bind called directly has had no filter). A node object that is not
 * known, or that has no allocatable list, is not judged here.
 */
public final class NodeEligibility {
  /** Judges nothing: for callers without the pod or Node objects (the trace simulator). */
  public static final NodeEligibility ANY = new NodeEligibility(null, Map.of(), name -> false, Map.of());

  private final NodeConstraints constraints;
  /** GPU resource names the pod asks, with its effective request of each (extended resources are whole numbers). */
  private final String[] resources;
  private final long[] amounts;
  private final Predicate<String> gpuResource;
  /** Node objects the request itself carries (kube-scheduler's snapshot), judged before the informer's. */
  private final Map<String, Node> sent;

  private NodeEligibility(NodeConstraints constraints, Map<String, Long> asks, Predicate<String> gpuResource, Map<String, Node> sent) {
    this.constraints = constraints;
    this.resources = asks.keySet().toArray(new String[0]);
    this.amounts = asks.values().stream().mapToLong(Long::longValue).toArray();
    this.gpuResource = gpuResource;
    this.sent = sent;
  }

  private NodeEligibility(NodeEligibility of, Map<String, Node> sent) {
    this.constraints = of.constraints;
    this.resources = of.resources;
    this.amounts = of.amounts;
    this.gpuResource = of.gpuResource;
    this.sent = sent;
  }

  /** The pod's constraints and its effective request of each GPU resource the extender places. */
  public static NodeEligibility of(Pod pod, GpuPolicy policy) {
    var asks = new LinkedHashMap<String, Long>();
    for (var resource :
        new String[] {policy.sharedMemory().resourceName(), policy.topology().resourceName(), policy.topology().wholeGpuResource()}) {
      var amount = PodResources.effective(pod, resource);
      if (amount.signum() > 0) {
        asks.put(resource, amount.setScale(0, java.math.RoundingMode.CEILING).longValueExact());
      }
    }
    return new NodeEligibility(NodeConstraints.of(pod.getSpec()), asks, policy::isGpuResource, Map.of());
  }

  /**
   * The same judgement, reading the Node objects an extender request carries (kube-scheduler with
   * {@code nodeCacheCapable: false}) before the informer's: they are the nodes kube-scheduler judged,
   * and a node the informer does not know yet is judged all the same.
   */
  public NodeEligibility judgingSent(java.util.List<Node> nodes) {
    if (constraints == null || nodes == null || nodes.isEmpty()) {
      return this;
    }
    var byName = new java.util.HashMap<String, Node>(nodes.size() * 2);
    for (var node : nodes) {
      if (node != null && node.getMetadata() != null && node.getMetadata().getName() != null) {
        byName.put(node.getMetadata().getName(), node);
      }
    }
    return new NodeEligibility(this, byName);
  }

  /**
   * Why the pod may not go to node {@code name}, whose Node object {@code nodes} gives
   * (unresolvable: no eviction changes it); empty when it may or the node is not known.
   */
  public Optional<NodeRefusal> refusal(String name, Function<String, Optional<Node>> nodes) {
    if (constraints == null) {
      return Optional.empty(); // ANY: no lookup either, filter runs this for thousands of nodes
    }
    var carried = sent.get(name);
    var node = carried != null ? Optional.of(carried) : nodes.apply(name);
    if (node.isEmpty()) {
      return Optional.empty();
    }
    var selection = constraints.refusal(node.get());
    if (selection.isPresent()) {
      return Optional.of(new NodeRefusal(selection.get(), true));
    }
    var allocatable = node.get().getStatus() == null ? null : node.get().getStatus().getAllocatable();
    if (allocatable == null || allocatable.isEmpty()) {
      return Optional.empty();
    }
    for (int i = 0; i < resources.length; i++) {
      var have = units(allocatable.get(resources[i]));
      if (have < amounts[i]) {
        var offered = have > 0
            ? "it has " + have + " allocatable " + resources[i]
            : "it has no allocatable " + resources[i] + " (" + offered(allocatable) + ")";
        return Optional.of(new NodeRefusal(offered + ", pod needs " + amounts[i], true));
      }
    }
    return Optional.empty();
  }

  /**
   * How many units of {@code resource} the node's {@code status.allocatable} lists (0 when it lists
   * others but not this one), as {@link #refusal} reads it; empty when the node has no allocatable
   * list (not known: its labels decide).
   */
  public static java.util.OptionalLong allocatable(Node node, String resource) {
    var allocatable = node == null || node.getStatus() == null ? null : node.getStatus().getAllocatable();
    if (allocatable == null || allocatable.isEmpty()) {
      return java.util.OptionalLong.empty();
    }
    return java.util.OptionalLong.of(units(allocatable.get(resource)));
  }

  /** {@code its GPU resources: aliyun.com/gpu=8}, or that it offers none. */
  private String offered(Map<String, Quantity> allocatable) {
    var gpus = new TreeMap<String, String>();
    allocatable.forEach((name, quantity) -> {
      if (gpuResource.test(name) && units(quantity) > 0) {
        gpus.put(name, Long.toString(units(quantity)));
      }
    });
    if (gpus.isEmpty()) {
      return "it offers no GPU resource";
    }
    var text = new java.util.StringJoiner(", ", "its GPU resources: ", "");
    gpus.forEach((name, value) -> text.add(name + "=" + value));
    return text.toString();
  }

  /**
   * A node's allocatable amount of an extended resource (a whole number, written {@code "8"} by the
   * kubelet), read without {@link Quantity#getNumericalAmount}'s BigDecimal arithmetic: filter
   * reads it for every node of every request.
   */
  static long units(Quantity quantity) {
    if (quantity == null || quantity.getAmount() == null) {
      return 0;
    }
    var text = quantity.getAmount();
    var plain = (quantity.getFormat() == null || quantity.getFormat().isEmpty()) && !text.isEmpty();
    for (int i = 0; plain && i < text.length(); i++) {
      plain = Character.isDigit(text.charAt(i));
    }
    if (plain && text.length() < 19) {
      return Long.parseLong(text);
    }
    return io.gpuadmission.pod.QuantitySyntax.amount(quantity).setScale(0, java.math.RoundingMode.FLOOR).longValue();
  }
}
