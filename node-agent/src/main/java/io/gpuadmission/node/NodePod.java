package io.gpuadmission.node;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.contract.ContainerGpus;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.quantity.KubeQuantity;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A pod bound to this node, as much of it as the agent reads: identity, node, the GPU annotations
 * it compares and writes, creation time, phase, whether it is being deleted, and each container's
 * name, restart policy and whole-GPU amounts (limits, else requests).
 */
public record NodePod(String namespace, String name, String uid, String node, Map<String, String> annotations, Instant created,
    boolean deleting, String phase, List<Container> initContainers, List<Container> containers) {
  /** The annotations the agent reads: bind's choice and split, what the node gave, whether the plugin handed the choice over. */
  static final List<String> KEPT_ANNOTATIONS =
      List.of(GpuAnnotations.GPU_INDICES, GpuAnnotations.GPU_ALLOCATED, GpuAnnotations.GPU_ASSIGNED, ContainerGpus.CONTAINER_GPUS);

  /** One container: its name, restart policy ({@code Always} makes an init container a sidecar) and resource amounts. */
  public record Container(String name, String restartPolicy, Map<String, BigDecimal> limits, Map<String, BigDecimal> requests) {
    private static final BigDecimal INT_MAX = BigDecimal.valueOf(Integer.MAX_VALUE);
    private static final BigDecimal INT_MIN = BigDecimal.valueOf(Integer.MIN_VALUE);

    public Container {
      limits = Map.copyOf(limits);
      requests = Map.copyOf(requests);
    }

    /** How much of {@code resource} it asks: its limit, else its request, else 0. */
    public int amount(String resource) {
      var amount = limits.containsKey(resource) ? limits.get(resource) : requests.getOrDefault(resource, BigDecimal.ZERO);
      // Whole GPUs: an absurd amount (a valid 1e99) is capped rather than wrapped or expanded.
      return amount.compareTo(INT_MAX) > 0 ? Integer.MAX_VALUE : amount.compareTo(INT_MIN) < 0 ? Integer.MIN_VALUE : amount.intValue();
    }

    public boolean sidecar() {
      return "Always".equals(restartPolicy);
    }
  }

  public NodePod {
    annotations = Map.copyOf(annotations);
    initContainers = List.copyOf(initContainers);
    containers = List.copyOf(containers);
  }

  /** A pod known by identity and annotations only (what a write needs). */
  public NodePod(String namespace, String name, String uid, String node, Map<String, String> annotations) {
    this(namespace, name, uid, node, annotations, Instant.EPOCH, false, "", List.of(), List.of());
  }

  public String key() {
    return namespace + "/" + name;
  }

  /** Succeeded or Failed: its containers hold nothing any more. */
  public boolean finished() {
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  /** The pod from the API server's JSON, stripped to what the agent keeps. */
  static NodePod of(JsonNode pod) {
    var meta = pod.path("metadata");
    var annotations = new HashMap<String, String>();
    for (var key : KEPT_ANNOTATIONS) {
      var value = meta.path("annotations").get(key);
      if (value != null && value.isTextual()) {
        annotations.put(key, value.asText());
      }
    }
    var spec = pod.path("spec");
    return new NodePod(meta.path("namespace").asText(""), meta.path("name").asText(""), meta.path("uid").asText(""),
        spec.path("nodeName").asText(null), annotations, instant(meta.path("creationTimestamp").asText("")),
        meta.hasNonNull("deletionTimestamp"), pod.path("status").path("phase").asText(""), containers(spec.path("initContainers")),
        containers(spec.path("containers")));
  }

  private static Instant instant(String text) {
    try {
      return text.isEmpty() ? Instant.EPOCH : Instant.parse(text);
    } catch (DateTimeParseException unreadable) {
      return Instant.EPOCH;
    }
  }

  private static List<Container> containers(JsonNode list) {
    var out = new ArrayList<Container>();
    for (var c : list) {
      var resources = c.path("resources");
      out.add(new Container(c.path("name").asText(""), c.path("restartPolicy").asText(null), amounts(resources.path("limits")),
          amounts(resources.path("requests"))));
    }
    return out;
  }

  private static Map<String, BigDecimal> amounts(JsonNode map) {
    var out = new HashMap<String, BigDecimal>();
    map.properties().forEach(e -> KubeQuantity.parseJsonValue(e.getValue().asText("")).ifPresent(q -> out.put(e.getKey(), q)));
    return out;
  }
}
