package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * How a pod of a topology-aware training job is recognised and what it receives. {@code
 * requireNVLink}: a member asking two or more whole GPUs is placed only on GPUs that are all
 * pairwise NVLink-connected, per its node model's matrix in {@code allocator.topologies}. {@code
 * ackAnnotations}: bind also writes the chosen GPUs in the annotations Alibaba's {@code arena top
 * node} reads for a topology pod ({@code topology.kubernetes.io/gpu-group} and {@code gpu-visible}).
 */
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
    List<String> allowedNamespaces,
    ConflictMode onConflict,
    boolean requireNVLink,
    boolean ackAnnotations) {

  public TopologyPolicy {
    allowedNamespaces = List.copyOf(allowedNamespaces);
  }

  /** An empty list allows every namespace that is not exempt. */
  public boolean allowsNamespace(String namespace) {
    return allowedNamespaces.isEmpty() || allowedNamespaces.contains(namespace);
  }


  /**
   * What happens to a topology pod that asks for something the API server forbids together with a
   * host namespace (shareProcessNamespace with hostPID, a hostPort other than its containerPort
   * with hostNetwork, hostUsers: false with any of them): refused with the reason, or admitted
   * without that one setting, with a warning.
   */
  public enum ConflictMode {
    @JsonProperty("refuse")
    REFUSE,
    @JsonProperty("skip")
    SKIP
  }
}
