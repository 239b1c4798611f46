package io.gpuadmission.preemption;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;

/**
 * What preemption reads of a GPU pod, as kube-scheduler's DefaultPreemption reads it: priority
 * ({@code spec.priority}, 0 when unset, as {@code corev1helpers.PodPriority}), when it started
 * ({@link Instant#MAX} before it has, as {@code util.GetPodStartTime} takes "now"), whether it is
 * being deleted and whether by a scheduler's preemption ({@code DisruptionTarget} condition with
 * reason {@code PreemptionByScheduler}), the gang it belongs to, and the node it is nominated to.
 *
 * @param gang {@code namespace/job} of a topology job placed as a gang, empty for any other pod
 * @param node the node it is bound to, "" while pending
 * @param nominated {@code status.nominatedNodeName}, "" when none
 * @param ask what it asks of a node's GPUs
 */
public record PodFacts(
    String uid,
    String namespace,
    String name,
    int priority,
    Instant started,
    boolean terminating,
    boolean preemptedByScheduler,
    Optional<String> gang,
    String node,
    String nominated,
    Map<String, String> labels,
    GpuAsk ask) {
  /** kube-scheduler's {@code v1.DisruptionTarget} condition type and the reason its preemption writes. */
  public static final String DISRUPTION_TARGET = "DisruptionTarget";

  public static final String PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler";

  public PodFacts {
    // The pod's own map, not a copy (one per GPU pod, shared with the informer's stripped pod).
    labels = labels == null ? Map.of() : Collections.unmodifiableMap(labels);
  }

  public static PodFacts of(Pod pod, GpuPolicy policy) {
    var meta = pod.getMetadata();
    var spec = pod.getSpec();
    var status = pod.getStatus();
    var gang =
        TopologyJob.of(pod, policy.topology())
            .filter(TopologyJob::placedTogether)
            .filter(job -> TopologyJob.asksWholeGpus(pod, policy.topology()))
            .map(job -> meta.getNamespace() + "/" + job.displayName());
    return new PodFacts(
        meta.getUid() == null ? "" : meta.getUid(),
        meta.getNamespace(),
        meta.getName(),
        priority(pod),
        started(status == null ? null : status.getStartTime()),
        meta.getDeletionTimestamp() != null,
        meta.getDeletionTimestamp() != null && preemptedByScheduler(pod),
        gang,
        spec == null || spec.getNodeName() == null ? "" : spec.getNodeName(),
        status == null || status.getNominatedNodeName() == null ? "" : status.getNominatedNodeName(),
        meta.getLabels(),
        GpuAsk.of(pod, policy));
  }

  /** {@code corev1helpers.PodPriority}: the admitted priority, 0 when the pod has none. */
  public static int priority(Pod pod) {
    return pod.getSpec() == null || pod.getSpec().getPriority() == null ? 0 : pod.getSpec().getPriority();
  }

  /** Pending, not being deleted, and nominated to a node: kube-scheduler counts it there. */
  public boolean nominatedPending() {
    return node.isEmpty() && !nominated.isEmpty() && !terminating;
  }

  /** {@code ns/name}. */
  public String pod() {
    return namespace + "/" + name;
  }

  private static boolean preemptedByScheduler(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return false;
    }
    for (var condition : pod.getStatus().getConditions()) {
      if (condition != null && DISRUPTION_TARGET.equals(condition.getType())) {
        return "True".equals(condition.getStatus()) && PREEMPTION_BY_SCHEDULER.equals(condition.getReason());
      }
    }
    return false;
  }

  private static Instant started(String time) {
    try {
      return time == null ? Instant.MAX : Instant.parse(time);
    } catch (DateTimeParseException unreadable) {
      return Instant.MAX;
    }
  }
}
