package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.policy.TopologyPolicy;
import java.util.Optional;

/**
 * The host namespaces a topology pod may be given, each with the policy switch that asks for it,
 * the pod field that holds it, and why the API server would refuse it for this pod. Mutation and
 * validation walk the same list, so they cannot disagree on which namespace is blocked.
 */
public enum HostNamespace {
  IPC("hostIPC"),
  NETWORK("hostNetwork"),
  PID("hostPID");

  private final String field;

  HostNamespace(String field) {
    this.field = field;
  }

  /** The pod field, as messages name it. */
  public String field() {
    return field;
  }

  /** The policy gives topology pods this namespace. */
  public boolean wanted(TopologyPolicy topology) {
    return switch (this) {
      case IPC -> topology.hostIPC();
      case NETWORK -> topology.hostNetwork();
      case PID -> topology.hostPID();
    };
  }

  /** The policy gives it and the pod does not have it yet. */
  public boolean missing(Pod pod, TopologyPolicy topology) {
    var spec = pod.getSpec();
    var value = switch (this) {
      case IPC -> spec.getHostIPC();
      case NETWORK -> spec.getHostNetwork();
      case PID -> spec.getHostPID();
    };
    return wanted(topology) && !Boolean.TRUE.equals(value);
  }

  public void grant(Pod pod) {
    switch (this) {
      case IPC -> pod.getSpec().setHostIPC(true);
      case NETWORK -> pod.getSpec().setHostNetwork(true);
      case PID -> pod.getSpec().setHostPID(true);
    }
  }

  /** Why the API server would refuse this pod with the namespace, if it would. */
  public Optional<String> conflict(Pod pod) {
    return switch (this) {
      case IPC -> HostNamespaceConflicts.hostIPC(pod);
      case NETWORK -> HostNamespaceConflicts.hostNetwork(pod);
      case PID -> HostNamespaceConflicts.hostPID(pod);
    };
  }
}
