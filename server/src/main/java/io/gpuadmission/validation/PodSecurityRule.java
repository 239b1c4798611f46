package io.gpuadmission.validation;

import java.util.ArrayList;
import java.util.Set;

/**
 * Says now, in our words, what the PodSecurity admission would refuse later: host namespaces in
 * a namespace that enforces the baseline or restricted level.
 */
public final class PodSecurityRule implements PodRule {
  static final String NAME = "pod-security";
  static final String ENFORCE_LABEL = "pod-security.kubernetes.io/enforce";
  private static final Set<String> FORBID_HOST_NAMESPACES = Set.of("baseline", "restricted");

  @Override
  public void check(PodSubject s, ValidationResult result) {
    var spec = s.pod().getSpec();
    var host = new ArrayList<String>();
    if (Boolean.TRUE.equals(spec.getHostIPC())) {
      host.add("hostIPC");
    }
    if (Boolean.TRUE.equals(spec.getHostNetwork())) {
      host.add("hostNetwork");
    }
    if (Boolean.TRUE.equals(spec.getHostPID())) {
      host.add("hostPID");
    }
    if (host.isEmpty()) {
      return;
    }
    s.cluster()
        .namespaceLabels(s.namespace())
        .map(labels -> labels.get(ENFORCE_LABEL))
        .filter(FORBID_HOST_NAMESPACES::contains)
        .ifPresent(
            level ->
                result.refuse(
                    NAME,
                    "spec",
                    s.prefix() + "namespace \"" + s.namespace() + "\" enforces Pod Security \"" + level + "\", which forbids "
                        + String.join(", ", host) + " (topology jobs need them); label the namespace "
                        + ENFORCE_LABEL + "=privileged or run the job in another namespace"));
  }
}
