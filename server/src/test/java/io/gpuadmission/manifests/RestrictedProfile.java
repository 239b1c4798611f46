package io.gpuadmission.manifests;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SeccompProfile;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The checks of Pod Security Standards' {@code restricted} level (which includes {@code
 * baseline}), as kubernetes.io/docs/concepts/security/pod-security-standards lists them, applied
 * to a pod spec. Returns what breaks them, by field path; empty when the pod would be admitted.
 */
final class RestrictedProfile {
  private static final Set<String> BASELINE_CAPABILITIES =
      Set.of("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
          "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT");
  private static final Set<String> SAFE_SYSCTLS =
      Set.of("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
          "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
          "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
          "net.ipv4.tcp_keepalive_probes");
  private static final Set<String> SELINUX_TYPES = Set.of("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t");

  private RestrictedProfile() {}

  static List<String> violations(PodSpec spec) {
    var out = new ArrayList<String>();
    var pod = spec.getSecurityContext();
    // baseline
    if (Boolean.TRUE.equals(spec.getHostNetwork()) || Boolean.TRUE.equals(spec.getHostPID()) || Boolean.TRUE.equals(spec.getHostIPC())) {
      out.add("spec.host{Network,PID,IPC}: host namespaces");
    }
    for (var volume : spec.getVolumes()) {
      if (volume.getHostPath() != null) {
        out.add("spec.volumes[" + volume.getName() + "].hostPath");
      }
      if (!restrictedVolume(volume)) {
        out.add("spec.volumes[" + volume.getName() + "]: type not allowed by restricted");
      }
    }
    if (pod != null) {
      pod.getSysctls().stream().filter(s -> !SAFE_SYSCTLS.contains(s.getName()))
          .forEach(s -> out.add("spec.securityContext.sysctls[" + s.getName() + "]"));
      if (pod.getSeLinuxOptions() != null && !SELINUX_TYPES.contains(nullToEmpty(pod.getSeLinuxOptions().getType()))) {
        out.add("spec.securityContext.seLinuxOptions.type");
      }
      if (pod.getRunAsUser() != null && pod.getRunAsUser() == 0) {
        out.add("spec.securityContext.runAsUser: 0");
      }
    }
    var podNonRoot = pod != null && Boolean.TRUE.equals(pod.getRunAsNonRoot());
    var podSeccomp = pod == null ? null : pod.getSeccompProfile();
    if (podSeccomp != null && !allowedSeccomp(podSeccomp)) {
      out.add("spec.securityContext.seccompProfile.type: " + podSeccomp.getType());
    }
    var containers = Stream.of(spec.getInitContainers(), spec.getContainers()).flatMap(List::stream).toList();
    for (var container : containers) {
      out.addAll(container(container, podNonRoot, podSeccomp != null));
    }
    return out;
  }

  private static List<String> container(Container container, boolean podNonRoot, boolean podSeccomp) {
    var out = new ArrayList<String>();
    var at = "containers[" + container.getName() + "]";
    container.getPorts().stream().filter(p -> p.getHostPort() != null && p.getHostPort() != 0)
        .forEach(p -> out.add(at + ".ports.hostPort"));
    var context = container.getSecurityContext();
    if (context == null) {
      out.add(at + ".securityContext: missing (allowPrivilegeEscalation, capabilities)");
      return out;
    }
    if (Boolean.TRUE.equals(context.getPrivileged())) {
      out.add(at + ".securityContext.privileged");
    }
    if (!Boolean.FALSE.equals(context.getAllowPrivilegeEscalation())) {
      out.add(at + ".securityContext.allowPrivilegeEscalation must be false");
    }
    if (context.getProcMount() != null && !"Default".equals(context.getProcMount())) {
      out.add(at + ".securityContext.procMount");
    }
    if (context.getSeLinuxOptions() != null && !SELINUX_TYPES.contains(nullToEmpty(context.getSeLinuxOptions().getType()))) {
      out.add(at + ".securityContext.seLinuxOptions.type");
    }
    if (Boolean.FALSE.equals(context.getRunAsNonRoot()) || !(podNonRoot || Boolean.TRUE.equals(context.getRunAsNonRoot()))) {
      out.add(at + ".securityContext.runAsNonRoot must be true (here or for the pod)");
    }
    if (context.getRunAsUser() != null && context.getRunAsUser() == 0) {
      out.add(at + ".securityContext.runAsUser: 0");
    }
    if (context.getSeccompProfile() != null ? !allowedSeccomp(context.getSeccompProfile()) : !podSeccomp) {
      out.add(at + ".securityContext.seccompProfile must be RuntimeDefault or Localhost (here or for the pod)");
    }
    var capabilities = context.getCapabilities();
    if (capabilities == null || !capabilities.getDrop().contains("ALL")) {
      out.add(at + ".securityContext.capabilities.drop must include ALL");
    }
    if (capabilities != null) {
      capabilities.getAdd().stream().filter(c -> !c.equals("NET_BIND_SERVICE"))
          .forEach(c -> out.add(at + ".securityContext.capabilities.add[" + c + "]"
              + (BASELINE_CAPABILITIES.contains(c) ? " (baseline only)" : "")));
    }
    return out;
  }

  private static boolean allowedSeccomp(SeccompProfile profile) {
    return "RuntimeDefault".equals(profile.getType()) || "Localhost".equals(profile.getType());
  }

  private static boolean restrictedVolume(Volume v) {
    return v.getConfigMap() != null || v.getCsi() != null || v.getDownwardAPI() != null || v.getEmptyDir() != null
        || v.getEphemeral() != null || v.getPersistentVolumeClaim() != null || v.getProjected() != null
        || v.getSecret() != null;
  }

  private static String nullToEmpty(String text) {
    return text == null ? "" : text;
  }
}
