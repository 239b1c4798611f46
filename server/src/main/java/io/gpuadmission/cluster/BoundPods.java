package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.HeldRoom;
import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/** GPU pods as the ledger needs them: recognised, stripped to the fields it reads, listed in pages. */
public final class BoundPods {
  static final long PAGE = 500;

  /** The condition a scheduler's preemption marks its victims with (preemption reads it). */
  private static final String DISRUPTION_TARGET = "DisruptionTarget";

  /** The condition kube-scheduler writes on a pod it could not place (reclaim reads it). */
  private static final String POD_SCHEDULED = "PodScheduled";

  private BoundPods() {}

  public static boolean isGpuPod(Pod pod, GpuPolicy policy) {
    return GpuAsk.of(pod, policy).kind() != GpuAsk.Kind.NONE;
  }

  /** Every bound GPU pod's claim, from a fresh paged list (consistent with what is bound now). */
  public static List<GpuClaim> list(KubernetesClient client, GpuPolicy policy) {
    var claims = new ArrayList<GpuClaim>();
    String next = null;
    do {
      var options = new ListOptionsBuilder().withLimit(PAGE).withContinue(next).build();
      var page = client.pods().inAnyNamespace().list(options);
      for (var pod : page.getItems()) {
        if (isGpuPod(pod, policy)) {
          PodClaims.claimOf(pod).ifPresent(claims::add);
        }
      }
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
    return claims;
  }

  /**
   * A copy with only what the ledger reads: identity, GPU annotations, node, resources (init
   * containers' and the overhead too, for the CPU request), phase; for
   * a pod asking whole GPUs, which may be a gang member under this or a later policy, also what
   * gang placement reads (labels, owner, creation and deletion time, plan annotations, node
   * selection, tolerations, host network and ports). For preemption, every GPU pod keeps its
   * labels, priority, start, deletion time, nomination and a DisruptionTarget condition. A pending
   * pod keeps its node selection and tolerations and kube-scheduler's PodScheduled condition too:
   * quota reclaim looks for the pods kube-scheduler could not place, and where they may go; and the
   * room reclaim holds for it ({@link HeldRoom}'s condition). Memory
   * shares, the many small pods, stay lean otherwise. Built with plain
   * setters, not the model's builders (which deep-copy): fabric8 runs the store on its HTTP event
   * loop, and the initial list of a large cluster passes every pod through here.
   */
  static Pod strip(Pod pod, GpuPolicy policy) {
    var source = pod.getMetadata();
    var member = source.getLabels() != null && GpuAsk.of(pod, policy).kind() == GpuAsk.Kind.WHOLE;
    var pending = pod.getSpec() != null && (pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty());
    var meta = new ObjectMeta();
    meta.setName(source.getName());
    meta.setNamespace(source.getNamespace());
    meta.setUid(source.getUid());
    meta.setResourceVersion(source.getResourceVersion());
    if (source.getAnnotations() != null) {
      var kept = new HashMap<String, String>();
      source.getAnnotations().forEach((k, v) -> {
        if (k.startsWith("ALIYUN_COM_GPU_MEM_") || k.equals(GpuAnnotations.GPU_INDICES) || k.equals(GpuAnnotations.GPU_ALLOCATED)
            || (member && (k.equals(MemberPlan.PLAN) || k.equals(MemberPlan.NODE) || k.equals(MemberPlan.GPUS)))) {
          kept.put(k, v);
        }
      });
      meta.setAnnotations(kept);
    }
    meta.setDeletionTimestamp(source.getDeletionTimestamp());
    var spec = new PodSpec();
    // Labels: a gang member's job, and the PodDisruptionBudgets preemption weighs.
    meta.setLabels(source.getLabels());
    if (member) {
      meta.setOwnerReferences(source.getOwnerReferences());
      meta.setCreationTimestamp(source.getCreationTimestamp());
    }
    if ((member || pending) && pod.getSpec() != null) {
      spec.setNodeSelector(pod.getSpec().getNodeSelector());
      spec.setAffinity(pod.getSpec().getAffinity());
      spec.setTolerations(pod.getSpec().getTolerations());
      spec.setHostNetwork(pod.getSpec().getHostNetwork());
    }
    if (pod.getSpec() != null) {
      spec.setNodeName(pod.getSpec().getNodeName());
      spec.setPriority(pod.getSpec().getPriority());
      var containers = new ArrayList<Container>();
      if (pod.getSpec().getContainers() != null) {
        for (var c : pod.getSpec().getContainers()) {
          if (c == null) {
            continue;
          }
          var kept = new Container();
          kept.setName(c.getName());
          kept.setResources(c.getResources());
          if (member) {
            kept.setPorts(c.getPorts());
          }
          containers.add(kept);
        }
      }
      spec.setContainers(containers);
      // The pod's CPU request counts its init containers (and sidecars) and overhead too.
      if (pod.getSpec().getInitContainers() != null) {
        var inits = new ArrayList<Container>();
        for (var c : pod.getSpec().getInitContainers()) {
          if (c != null) {
            var kept = new Container();
            kept.setName(c.getName());
            kept.setResources(c.getResources());
            kept.setRestartPolicy(c.getRestartPolicy());
            inits.add(kept);
          }
        }
        spec.setInitContainers(inits);
      }
      spec.setOverhead(pod.getSpec().getOverhead());
    }
    var status = new PodStatus();
    if (pod.getStatus() != null) {
      status.setPhase(pod.getStatus().getPhase());
      status.setStartTime(pod.getStatus().getStartTime());
      status.setNominatedNodeName(pod.getStatus().getNominatedNodeName());
      if (pod.getStatus().getConditions() != null && (source.getDeletionTimestamp() != null || pending)) {
        // Only a pod being deleted can be terminating by preemption, only a pending one waits for
        // kube-scheduler; the rest need no conditions.
        status.setConditions(
            pod.getStatus().getConditions().stream()
                .filter(c -> c != null && (DISRUPTION_TARGET.equals(c.getType())
                    || (pending && (POD_SCHEDULED.equals(c.getType()) || HeldRoom.CONDITION.equals(c.getType())))))
                .toList());
      }
    }
    var out = new Pod();
    out.setMetadata(meta);
    out.setSpec(spec);
    out.setStatus(status);
    return SharedParts.share(out);
  }
}
