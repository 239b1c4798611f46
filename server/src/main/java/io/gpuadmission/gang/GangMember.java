package io.gpuadmission.gang;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.pod.NodeConstraints;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A pod of a topology job that asks for whole GPUs, as gang placement sees it: which gang, how
 * many members the gang says it has, the GPUs it asks, where it is bound or planned, and where it
 * may run.
 *
 * @param replicas the replica label's value as written (members must agree on it)
 * @param resource the whole-GPU resource it asks ({@code aliyun.com/gpu} on topology nodes, else
 *     {@code nvidia.com/gpu}), whose allocatable count limits the nodes it is planned on
 * @param node the node it is bound to, "" while pending
 * @param hostPorts the ports it takes on its node (kube-scheduler keeps two pods asking one port apart)
 * @param nvlink true when its GPUs must all be NVLink-connected (policy {@code topology.requireNVLink})
 * @param planMarked true when it carries plan annotations, readable or not
 */
public record GangMember(
    String uid,
    String namespace,
    String name,
    GangKey gang,
    String replicas,
    String resource,
    int gpus,
    Instant created,
    String node,
    Optional<MemberPlan> plan,
    boolean planMarked,
    NodeConstraints constraints,
    Set<Integer> hostPorts,
    boolean nvlink) {

  public GangMember {
    hostPorts = Set.copyOf(hostPorts);
  }

  /**
   * The member a pod is, when it is one: a pod of a topology job of more than one replica, asking
   * whole GPUs, not finished or being deleted.
   */
  public static Optional<GangMember> of(Pod pod, GpuPolicy policy) {
    if (pod == null || pod.getMetadata() == null || PodClaims.finished(pod) || pod.getMetadata().getDeletionTimestamp() != null) {
      return Optional.empty();
    }
    var job = TopologyJob.of(pod, policy.topology());
    var ask = GpuAsk.of(pod, policy);
    if (job.isEmpty() || !job.get().placedTogether() || ask.kind() != GpuAsk.Kind.WHOLE) {
      return Optional.empty();
    }
    var meta = pod.getMetadata();
    var spec = pod.getSpec();
    var node = spec == null || spec.getNodeName() == null ? "" : spec.getNodeName();
    return Optional.of(
        new GangMember(
            meta.getUid() == null ? "" : meta.getUid(),
            meta.getNamespace(),
            meta.getName(),
            new GangKey(meta.getNamespace(), job.get().displayName()),
            job.get().replicas(),
            resource(pod, policy),
            ask.count(),
            created(meta.getCreationTimestamp()),
            node,
            MemberPlan.of(pod),
            MemberPlan.marked(pod),
            NodeConstraints.of(spec),
            hostPorts(pod),
            ask.nvlink()));
  }

  /** The topology pool's whole-GPU resource when the pod asks it, else the other one. */
  private static String resource(Pod pod, GpuPolicy policy) {
    var topology = policy.topology();
    return io.gpuadmission.pod.PodResources.effective(pod, topology.resourceName()).signum() > 0
        ? topology.resourceName()
        : topology.wholeGpuResource();
  }

  public boolean bound() {
    return !node.isEmpty();
  }

  /** {@code ml/bert-worker-0}. */
  public String pod() {
    return namespace + "/" + name;
  }

  /**
   * Its host ports, declared or implied: with hostNetwork every containerPort is a port of the
   * node (the API server sets hostPort to it), and kube-scheduler keeps two pods asking for one
   * port off the same node.
   */
  static Set<Integer> hostPorts(Pod pod) {
    var spec = pod.getSpec();
    if (spec == null || spec.getContainers() == null) {
      return Set.of();
    }
    var hostNetwork = Boolean.TRUE.equals(spec.getHostNetwork());
    var ports = new TreeSet<Integer>();
    for (var container : spec.getContainers()) {
      if (container == null || container.getPorts() == null) {
        continue;
      }
      for (var port : container.getPorts()) {
        if (port != null && port.getHostPort() != null && port.getHostPort() > 0) {
          ports.add(port.getHostPort());
        } else if (port != null && hostNetwork && port.getContainerPort() != null) {
          ports.add(port.getContainerPort());
        }
      }
    }
    return ports;
  }

  private static Instant created(String timestamp) {
    try {
      return timestamp == null ? Instant.EPOCH : Instant.parse(timestamp);
    } catch (DateTimeParseException unreadable) {
      return Instant.EPOCH;
    }
  }
}
