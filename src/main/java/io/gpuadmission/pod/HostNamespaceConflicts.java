package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Optional;

/**
 * Why the API server would refuse a pod given a host namespace: the pod already asks for
 * something the API server's validation forbids together with it. A patch that sets the host
 * namespace anyway would make the API server reject the pod with an error about fields the user
 * never wrote, so callers skip the setting (mutation) or refuse with this reason (validation).
 */
public final class HostNamespaceConflicts {
  private HostNamespaceConflicts() {}

  /** Why {@code hostPID: true} cannot be added, if it cannot. */
  public static Optional<String> hostPID(Pod pod) {
    var spec = pod.getSpec();
    if (Boolean.TRUE.equals(spec.getShareProcessNamespace())) {
      return Optional.of("the pod sets shareProcessNamespace: true, which the API server refuses together with hostPID");
    }
    return common(pod, "hostPID");
  }

  /** Why {@code hostIPC: true} cannot be added, if it cannot. */
  public static Optional<String> hostIPC(Pod pod) {
    return common(pod, "hostIPC");
  }

  /** Why {@code hostNetwork: true} cannot be added, if it cannot. */
  public static Optional<String> hostNetwork(Pod pod) {
    if (Boolean.FALSE.equals(pod.getSpec().getHostUsers())) {
      return Optional.of(userNamespace("hostNetwork"));
    }
    for (Container container : PodResources.allContainers(pod)) {
      if (container.getPorts() == null) {
        continue;
      }
      for (var port : container.getPorts()) {
        var hostPort = port.getHostPort();
        if (hostPort != null && hostPort != 0 && !hostPort.equals(port.getContainerPort())) {
          return Optional.of(
              "container \"" + container.getName() + "\" maps hostPort " + hostPort + " to containerPort "
                  + port.getContainerPort() + ", and with hostNetwork the API server requires hostPort to equal"
                  + " containerPort");
        }
      }
    }
    return Optional.empty();
  }

  private static Optional<String> common(Pod pod, String field) {
    var spec = pod.getSpec();
    if (Boolean.FALSE.equals(spec.getHostUsers())) {
      return Optional.of(userNamespace(field));
    }
    if (spec.getOs() != null && "windows".equals(spec.getOs().getName())) {
      return Optional.of("the pod sets os.name: windows, and Windows pods cannot have " + field);
    }
    return Optional.empty();
  }

  private static String userNamespace(String field) {
    return "the pod sets hostUsers: false (its own user namespace), which the API server refuses together with " + field;
  }
}
