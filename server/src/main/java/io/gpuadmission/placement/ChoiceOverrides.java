package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.contract.GpuAnnotations;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Pods whose node gave them other whole GPUs than the extender chose: {@code gpu-indices} says
 * what was asked, the node agent's {@code gpu-allocated} what the kubelet gave (and what the
 * ledger now counts). Shown by {@code /extender/inspect}; {@code counted} is told the node each
 * time this replica saw a pod's provisional choice overridden (not a pod that already carried both
 * when first seen, as after a restart: that override was counted before).
 */
public final class ChoiceOverrides {
  /** One pod's override. */
  public record Override(String namespace, String name, String node, List<Integer> asked, List<Integer> given) {
    public Override {
      asked = List.copyOf(asked);
      given = List.copyOf(given);
    }
  }

  private final Consumer<String> counted;
  private final Map<String, Override> overridden = new ConcurrentHashMap<>();
  /** Pods seen with the extender's choice and no node answer yet. */
  private final Set<String> provisional = ConcurrentHashMap.newKeySet();

  public ChoiceOverrides(Consumer<String> counted) {
    this.counted = counted;
  }

  /** A GPU pod as it is now. */
  public void observe(Pod pod) {
    var uid = pod.getMetadata().getUid();
    var annotations = pod.getMetadata().getAnnotations();
    var node = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
    if (PodClaims.finished(pod) || annotations == null || node == null || node.isEmpty()) {
      gone(pod);
      return;
    }
    List<Integer> asked;
    List<Integer> given;
    try {
      asked = parse(annotations.get(GpuAnnotations.GPU_INDICES));
      given = parse(annotations.get(GpuAnnotations.GPU_ALLOCATED));
    } catch (NumberFormatException unreadable) {
      return;
    }
    if (given == null) {
      overridden.remove(uid);
      if (asked != null) {
        provisional.add(uid);
      }
      return;
    }
    var wasProvisional = provisional.remove(uid);
    if (asked == null || new HashSet<>(asked).equals(new HashSet<>(given))) {
      overridden.remove(uid);
      return;
    }
    var override = new Override(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), node, asked, given);
    if (!override.equals(overridden.put(uid, override)) && wasProvisional) {
      counted.accept(node);
    }
  }

  public void gone(Pod pod) {
    var uid = pod.getMetadata().getUid();
    overridden.remove(uid);
    provisional.remove(uid);
  }

  /** Every override now, by node and pod. */
  public List<Override> list() {
    var out = new ArrayList<>(overridden.values());
    out.sort(Comparator.comparing(Override::node).thenComparing(Override::namespace).thenComparing(Override::name));
    return out;
  }

  private static List<Integer> parse(String value) {
    return value == null ? null : GpuAnnotations.parse(value);
  }
}
