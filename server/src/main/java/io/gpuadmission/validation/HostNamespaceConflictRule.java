package io.gpuadmission.validation;

import io.gpuadmission.pod.HostNamespace;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.TopologyPolicy.ConflictMode;
import java.util.ArrayList;

/**
 * A topology pod that asks for something the API server forbids together with a host namespace
 * the policy gives it. The mutation left that namespace out (a patch setting it would be
 * rejected); unless the policy says to run such pods without it, refuse with the reason here.
 */
public final class HostNamespaceConflictRule implements PodRule {
  static final String NAME = "host-namespace-conflict";

  @Override
  public void check(PodSubject s, ValidationResult result) {
    var topology = s.policy().topology();
    var job = TopologyJob.of(s.pod(), topology);
    if (job.isEmpty()
        || s.pod().getSpec() == null
        || topology.onConflict() == ConflictMode.SKIP
        || !topology.allowsNamespace(s.namespace())) {
      return;
    }
    var reasons = new ArrayList<String>();
    for (var namespace : HostNamespace.values()) {
      if (namespace.missing(s.pod(), topology)) {
        namespace.conflict(s.pod()).ifPresent(r -> reasons.add(namespace.field() + ", but " + r));
      }
    }
    if (!reasons.isEmpty()) {
      result.refuse(
          NAME,
          "spec",
          s.prefix() + "gpu-topology job \"" + job.get().displayName() + "\" needs " + String.join("; and ", reasons)
              + (reasons.size() == 1 ? "; remove that setting from the pod" : "; remove those settings from the pod")
              + " (or the platform team sets policy topology.onConflict: skip to run such pods without it)");
    }
  }
}
