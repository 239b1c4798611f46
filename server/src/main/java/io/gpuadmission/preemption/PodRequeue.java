package io.gpuadmission.preemption;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Makes kube-scheduler try a pending pod again now, instead of at its next cluster event or its
 * 5-minute flush of unschedulable pods: an update of a pod it found unschedulable requeues it
 * (the pod's own update event; any event at all for a pod only the extender refused, whose
 * rejector kube-scheduler records as {@code Extender}). The update is an annotation,
 * {@link #REQUEUED}, with the time; written only on a pod kube-scheduler's last attempt failed
 * for ({@code PodScheduled} False, reason {@code Unschedulable}), not bound, not being deleted.
 */
public final class PodRequeue {
  /** The annotation whose update requeues the pod. */
  public static final String REQUEUED = "gpu-admission.io/requeued";

  private final KubernetesClient client;
  private final Clock clock;

  public PodRequeue(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  /**
   * Requeues the pod of {@code facts} as it is now (read from the API server) if kube-scheduler
   * found it unschedulable and {@code also} holds for it; true when it was.
   */
  public boolean requeue(PodFacts facts, Predicate<Pod> also) {
    var resource = client.pods().inNamespace(facts.namespace()).withName(facts.name());
    var pod = resource.get();
    if (pod == null || !facts.uid().equals(pod.getMetadata().getUid()) || pod.getMetadata().getDeletionTimestamp() != null
        || pod.getSpec() == null || (pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty())
        || !unschedulable(pod) || !also.test(pod)) {
      return false;
    }
    // Milliseconds: two requeues within a second must both change the pod, or the second is no update.
    var now = DateTimeFormatter.ISO_INSTANT.format(clock.instant().truncatedTo(ChronoUnit.MILLIS));
    var patch = client.getKubernetesSerialization().asJson(Map.of("metadata", Map.of("annotations", Map.of(REQUEUED, now))));
    resource.patch(PatchContext.of(PatchType.JSON_MERGE), patch);
    return true;
  }

  /** kube-scheduler's last attempt failed: condition PodScheduled False, reason Unschedulable. */
  public static boolean unschedulable(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
      return false;
    }
    return pod.getStatus().getConditions().stream()
        .anyMatch(c -> c != null && "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()) && "Unschedulable".equals(c.getReason()));
  }
}
