package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.contract.GpuAnnotations;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A gang member's place in its gang's plan, written by the placement leader as annotations on the
 * pending pod: every replica's filter reads it from the pod kube-scheduler sends, every replica's
 * ledger holds its GPUs, a restarted or new leader finds it, and writing it is the pod update that
 * makes kube-scheduler retry the pod at once. The plan id is the instant the plan was made, so
 * its age survives a change of leader.
 */
public record MemberPlan(String planId, String node, List<Integer> gpus) {
  public static final String PLAN = "gpu-admission.io/gang-plan";
  public static final String NODE = "gpu-admission.io/planned-node";
  public static final String GPUS = "gpu-admission.io/planned-gpus";

  public MemberPlan {
    gpus = List.copyOf(gpus);
  }

  /** The plan on a pod; empty when there is none or it cannot be read (then it is released). */
  public static Optional<MemberPlan> of(Pod pod) {
    var annotations = pod.getMetadata() == null ? null : pod.getMetadata().getAnnotations();
    if (annotations == null || annotations.get(PLAN) == null || annotations.get(NODE) == null || annotations.get(GPUS) == null) {
      return Optional.empty();
    }
    try {
      var gpus = GpuAnnotations.parse(annotations.get(GPUS));
      var node = annotations.get(NODE);
      return gpus.isEmpty() || node.isBlank()
          ? Optional.empty()
          : Optional.of(new MemberPlan(annotations.get(PLAN), node, gpus));
    } catch (NumberFormatException unreadable) {
      return Optional.empty();
    }
  }

  /** True when the pod carries any plan annotation, readable or not. */
  public static boolean marked(Pod pod) {
    var annotations = pod.getMetadata() == null ? null : pod.getMetadata().getAnnotations();
    return annotations != null && (annotations.get(PLAN) != null || annotations.get(NODE) != null || annotations.get(GPUS) != null);
  }

  public static String idAt(Instant made) {
    return made.toString();
  }

  /** When the plan was made; the epoch for an id that is no instant (so it counts as timed out). */
  public Instant madeAt() {
    try {
      return Instant.parse(planId);
    } catch (DateTimeParseException unreadable) {
      return Instant.EPOCH;
    }
  }

  public Map<String, String> annotations() {
    var out = new LinkedHashMap<String, String>();
    out.put(PLAN, planId);
    out.put(NODE, node);
    out.put(GPUS, GpuAnnotations.join(gpus));
    return out;
  }

  /** The annotations as a JSON merge patch removes them. */
  public static Map<String, Object> released() {
    var out = new HashMap<String, Object>();
    out.put(PLAN, null);
    out.put(NODE, null);
    out.put(GPUS, null);
    return out;
  }

  /** {@code node-a GPUs 0,1}. */
  public String place() {
    return node + " GPU" + (gpus.size() == 1 ? " " : "s ") + GpuAnnotations.join(gpus);
  }
}
