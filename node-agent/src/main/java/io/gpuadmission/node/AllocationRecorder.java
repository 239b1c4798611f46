package io.gpuadmission.node;

import io.gpuadmission.node.api.ApiException;
import io.gpuadmission.node.api.ApiServer;
import io.gpuadmission.node.api.Json;
import io.gpuadmission.contract.GpuAnnotations;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * Writes what a pod really holds on the pod ({@code gpu-admission.io/gpu-allocated}, indices), once,
 * and again only when it changes; tells the pod, once, when the node gave other GPUs than the
 * extender chose ({@code gpu-admission.io/gpu-indices}). The write is a merge patch that also names
 * the pod's UID, which the API server treats as immutable: a pod deleted and recreated under the
 * same name since it was read refuses it instead of receiving another pod's GPUs.
 */
final class AllocationRecorder {
  private static final Logger LOG = Logger.getLogger(AllocationRecorder.class);
  static final String OVERRIDDEN = "GpuChoiceOverridden";

  /** What became of one pod's record. */
  enum Outcome {
    /** The pod already says so. */
    UNCHANGED,
    /** Written now. */
    WRITTEN,
    /** Written before; the informer does not show it yet. */
    PENDING,
    /** The pod is gone, or is another pod now (deleted between the kubelet's list and the write). */
    GONE,
    /** The API server did not take it; the next round tries again. */
    FAILED
  }

  private final ApiServer api;
  private final NodePods pods;
  private final Clock clock;
  /** Pod UID to the value this agent wrote, until the informer shows it (or the pod goes). */
  private final Map<String, String> written = new ConcurrentHashMap<>();
  private volatile String lastFailure = "";

  AllocationRecorder(ApiServer api, NodePods pods, Clock clock) {
    this.api = api;
    this.pods = pods;
    this.clock = clock;
  }

  Outcome record(NodePod pod, List<Integer> gpus) {
    var uid = pod.uid();
    var value = GpuAnnotations.join(gpus);
    var current = pod.annotations().get(GpuAnnotations.GPU_ALLOCATED);
    if (value.equals(current)) {
      written.remove(uid);
      return Outcome.UNCHANGED;
    }
    if (value.equals(written.get(uid))) {
      return Outcome.PENDING;
    }
    try {
      pods.patch(pod, annotationPatch(uid, GpuAnnotations.GPU_ALLOCATED, value));
    } catch (ApiException e) {
      if (e.code() == 404 || e.code() == 409 || e.code() == 422) {
        LOG.debugf("pod %s went before its GPUs were recorded (HTTP %d)", pod.key(), e.code());
        return Outcome.GONE;
      }
      lastFailure = e.getMessage();
      return Outcome.FAILED;
    }
    written.put(uid, value);
    if (current == null) {
      tellIfOverridden(pod, pod.annotations().get(GpuAnnotations.GPU_INDICES), gpus);
    }
    return Outcome.WRITTEN;
  }

  /**
   * Marks the pod {@code gpu-assigned: "true"}: the device plugin handed every container its part
   * of bind's choice. Best effort: the plugin's memory and the kubelet's record already keep the
   * pod from being handed GPUs again; the mark carries that over an agent restart.
   */
  Outcome markAssigned(NodePod pod) {
    try {
      pods.patch(pod, annotationPatch(pod.uid(), GpuAnnotations.GPU_ASSIGNED, "true"));
      return Outcome.WRITTEN;
    } catch (ApiException e) {
      if (e.code() == 404 || e.code() == 409 || e.code() == 422) {
        return Outcome.GONE;
      }
      LOG.debugf("could not mark pod %s assigned: %s", pod.key(), e.getMessage());
      return Outcome.FAILED;
    }
  }

  /** Forgets pods no longer listed by the kubelet. */
  void keepOnly(Set<String> uids) {
    written.keySet().retainAll(uids);
  }

  String lastFailure() {
    return lastFailure;
  }

  private void tellIfOverridden(NodePod pod, String asked, List<Integer> gpus) {
    if (asked == null) {
      return;
    }
    List<Integer> chosen;
    try {
      chosen = GpuAnnotations.parse(asked);
    } catch (NumberFormatException unreadable) {
      return;
    }
    if (new HashSet<>(chosen).equals(new HashSet<>(gpus))) {
      return;
    }
    var message = "asked " + GpuAnnotations.join(chosen) + ", the node gave " + GpuAnnotations.join(gpus);
    try {
      NodeEvents.publish(api, clock.instant(), pod, "Warning", OVERRIDDEN, message);
    } catch (ApiException e) {
      // An Event is a courtesy: the annotation, which the ledger reads, is written.
      LOG.debugf("could not publish Event %s on %s: %s", OVERRIDDEN, pod.key(), e.getMessage());
    }
    LOG.infof("pod %s: %s", pod.key(), message);
  }

  /** {@code {"metadata":{"uid":...,"annotations":{key:value}}}}: the UID makes the write fail on another pod of the same name. */
  static String annotationPatch(String uid, String key, String value) {
    var patch = Json.object();
    var meta = patch.putObject("metadata");
    meta.put("uid", uid);
    meta.putObject("annotations").put(key, value);
    return Json.write(patch);
  }

  Optional<String> writtenFor(String uid) {
    return Optional.ofNullable(written.get(uid));
  }
}
