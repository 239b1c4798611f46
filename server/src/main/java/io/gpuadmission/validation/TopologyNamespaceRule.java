package io.gpuadmission.validation;

import io.gpuadmission.pod.TopologyJob;

/** Topology jobs receive host namespaces, so they run only where the policy allows them. */
public final class TopologyNamespaceRule implements PodRule {
  static final String NAME = "topology-namespace";

  @Override
  public void check(PodSubject s, ValidationResult result) {
    var topology = s.policy().topology();
    var job = TopologyJob.of(s.pod(), topology);
    if (job.isPresent() && !topology.allowsNamespace(s.namespace())) {
      result.refuse(
          NAME,
          "metadata.labels." + topology.jobLabel(),
          s.prefix() + "gpu-topology job \"" + job.get().displayName() + "\" may not run in namespace \"" + s.namespace()
              + "\" (policy topology.allowedNamespaces: " + topology.allowedNamespaces()
              + "); run it in one of those namespaces or remove the " + topology.jobLabel() + " labels");
    }
  }
}
