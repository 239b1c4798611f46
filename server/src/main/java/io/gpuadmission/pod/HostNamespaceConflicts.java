package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.HashMap;
import java.util.List;
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
  static Optional<String> hostPID(Pod pod) {
    if (pod.getSpec() != null && Boolean.TRUE.equals(pod.getSpec().getShareProcessNamespace())) {
      return Optional.of("the pod sets shareProcessNamespace: true, which the API server refuses together with hostPID");
    }
    return common(pod, "hostPID");
  }

  /** Why {@code hostIPC: true} cannot be added, if it cannot. */
  static Optional<String> hostIPC(Pod pod) {
    return common(pod, "hostIPC").or(() -> sysctl(pod, "hostIPC", HostNamespaceConflicts::ipcNamespaced));
  }

  /** Why {@code hostNetwork: true} cannot be added, if it cannot. */
  static Optional<String> hostNetwork(Pod pod) {
    if (pod.getSpec() == null) {
      return Optional.empty();
    }
    if (Boolean.FALSE.equals(pod.getSpec().getHostUsers())) {
      return Optional.of(userNamespace("hostNetwork"));
    }
    return hostPorts(pod.getSpec().getContainers())
        .or(() -> hostPorts(pod.getSpec().getInitContainers()))
        .or(() -> sysctl(pod, "hostNetwork", name -> name.startsWith("net.")));
  }

  /**
   * On the host network every port a container declares is a host port (the API server defaults
   * hostPort to containerPort), so a hostPort other than its containerPort is refused, and so are
   * two ports that land on one host port and protocol.
   */
  private static Optional<String> hostPorts(List<Container> containers) {
    if (containers == null) {
      return Optional.empty();
    }
    var used = new HashMap<String, String>();
    for (var container : containers) {
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
        var protocol = port.getProtocol() == null ? "TCP" : port.getProtocol();
        var key = port.getContainerPort() + "/" + protocol;
        var first = used.putIfAbsent(key, container.getName());
        if (first != null) {
          return Optional.of(
              (first.equals(container.getName())
                      ? "container \"" + first + "\" declares port " + key + " twice"
                      : "containers \"" + first + "\" and \"" + container.getName() + "\" both declare port " + key)
                  + ", and with hostNetwork each port is a host port, which the API server refuses to give twice");
        }
      }
    }
    return Optional.empty();
  }

  /** IPC-namespaced sysctls, which the API server refuses with hostIPC. */
  private static boolean ipcNamespaced(String name) {
    return name.startsWith("kernel.shm") || name.startsWith("kernel.msg") || name.equals("kernel.sem")
        || name.startsWith("fs.mqueue.");
  }

  private static Optional<String> sysctl(Pod pod, String field, java.util.function.Predicate<String> namespaced) {
    var spec = pod.getSpec();
    if (spec == null || spec.getSecurityContext() == null || spec.getSecurityContext().getSysctls() == null) {
      return Optional.empty();
    }
    for (var sysctl : spec.getSecurityContext().getSysctls()) {
      if (sysctl.getName() != null && namespaced.test(dotted(sysctl.getName()))) {
        return Optional.of(
            "the pod sets sysctl " + sysctl.getName() + ", which belongs to the pod's own namespace and which the API"
                + " server refuses together with " + field);
      }
    }
    return Optional.empty();
  }

  /**
   * A sysctl name as the API server reads it: written with slashes ({@code net/ipv4/ip_forward}),
   * slashes and dots swap, as in the kernel's /proc/sys path.
   */
  static String dotted(String name) {
    var slash = name.indexOf('/');
    var dot = name.indexOf('.');
    if (slash < 0 || (dot >= 0 && dot < slash)) {
      return name;
    }
    var swapped = new StringBuilder(name.length());
    for (var c : name.toCharArray()) {
      swapped.append(c == '/' ? '.' : c == '.' ? '/' : c);
    }
    return swapped.toString();
  }

  private static Optional<String> common(Pod pod, String field) {
    var spec = pod.getSpec();
    if (spec == null) {
      return Optional.empty();
    }
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
