package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What the GPU ledger learns from each object, whoever delivers it: the service's informers
 * ({@link LedgerWatcher}, whose pod store keeps GPU pods only, stripped), or the command line's
 * files. Nodes give capacity; GPU pods give claims (bound), plans (pending gang members) or free
 * their GPUs (finished, deleted); {@code unhealthy-gpu-<node>} ConfigMaps of kube-system mark GPUs.
 */
public final class LedgerFeed {
  private final GpuLedger ledger;
  private final Supplier<GpuPolicy> policies;
  private final List<Consumer<Pod>> podsNow = new ArrayList<>();
  private final List<Consumer<Pod>> podsGone = new ArrayList<>();

  public LedgerFeed(GpuLedger ledger, Supplier<GpuPolicy> policies) {
    this.ledger = ledger;
    this.policies = policies;
  }

  /** Also tells {@code current} and {@code gone} of every GPU pod, after the ledger has taken it in. */
  public LedgerFeed alsoTell(Consumer<Pod> current, Consumer<Pod> gone) {
    podsNow.add(current);
    podsGone.add(gone);
    return this;
  }

  /** A node as it is now: its GPUs, or that it has none. */
  public void node(Node node) {
    GpuCapacityMapper.map(node, policies.get().nodeLabels())
        .ifPresentOrElse(ledger::putNode, () -> ledger.putNodeWithoutGpus(node.getMetadata().getName()));
  }

  public void nodeGone(Node node) {
    ledger.removeNode(node.getMetadata().getName());
  }

  /** Whether the pod store keeps {@code pod}: GPU pods only. */
  public boolean keeps(Pod pod) {
    return BoundPods.isGpuPod(pod, policies.get());
  }

  /** The pod as the store keeps it: only the fields the ledger and gang placement read. */
  public Pod strip(Pod pod) {
    return BoundPods.strip(pod, policies.get());
  }

  /**
   * A pod's current state: bound with a choice confirms it, finished frees it, a pending gang
   * member's plan holds its GPUs (and a plan removed frees them), pending keeps any reservation;
   * a choice in flight goes once the pod is bound without one, or is being deleted.
   */
  public void pod(Pod pod) {
    if (!keeps(pod)) {
      return;
    }
    var uid = pod.getMetadata().getUid();
    if (PodClaims.finished(pod)) {
      ledger.forget(uid);
    } else if (PodClaims.claimOf(pod).isPresent()) {
      ledger.confirm(PodClaims.claimOf(pod).get());
    } else if (pod.getSpec() == null || pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()) {
      if (pod.getMetadata().getDeletionTimestamp() != null) {
        ledger.release(uid); // kube-scheduler binds no pod being deleted
      }
      var key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
      MemberPlan.of(pod)
          .ifPresentOrElse(
              plan -> ledger.planSeen(GpuClaim.planned(uid, key, plan.node(), plan.gpus(), Instant.MAX)),
              () -> ledger.unplanSeen(uid));
    } else {
      ledger.release(uid); // bound without a choice of ours: what was held for it never comes
    }
    podsNow.forEach(listener -> listener.accept(pod));
  }

  public void podGone(Pod pod) {
    ledger.forget(pod.getMetadata().getUid());
    podsGone.forEach(listener -> listener.accept(pod));
  }

  /** Whether {@code map} is one the ledger reads: an {@code unhealthy-gpu-<node>} ConfigMap. */
  public static boolean unhealthyGpus(ConfigMap map) {
    return GpuCapacityMapper.unhealthyNode(map).isPresent();
  }

  public void configMap(ConfigMap map) {
    GpuCapacityMapper.unhealthyNode(map).ifPresent(n -> ledger.setUnhealthy(n, GpuCapacityMapper.unhealthyGpus(map)));
  }

  public void configMapGone(ConfigMap map) {
    GpuCapacityMapper.unhealthyNode(map).ifPresent(n -> ledger.setUnhealthy(n, Set.of()));
  }
}
