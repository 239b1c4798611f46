package io.gpuadmission.policy;

import java.util.List;

/** How a pod of a topology-aware training job is recognised and what it receives. */
public record TopologyPolicy(
    String jobLabel,
    String replicaLabel,
    String wholeGpuResource,
    String resourceName,
    String pool,
    boolean hostIPC,
    boolean hostNetwork,
    boolean hostPID,
    String dnsPolicy,
    List<String> allowedNamespaces) {

  public TopologyPolicy {
    allowedNamespaces = List.copyOf(allowedNamespaces);
  }

  /** An empty list allows every namespace that is not exempt. */
  public boolean allowsNamespace(String namespace) {
    return allowedNamespaces.isEmpty() || allowedNamespaces.contains(namespace);
  }

}
