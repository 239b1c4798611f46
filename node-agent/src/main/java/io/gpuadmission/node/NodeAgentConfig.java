package io.gpuadmission.node;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** Settings of the node agent; the DaemonSet sets the node's name. */
@ConfigMapping(prefix = "gpu-admission.node-agent")
public interface NodeAgentConfig {
  /** The node this agent runs on (the DaemonSet passes {@code spec.nodeName}). */
  Optional<String> nodeName();

  /** The kubelet's PodResources socket, in the host directory the DaemonSet mounts read-only. */
  @WithDefault("/var/lib/kubelet/pod-resources/kubelet.sock")
  Path socket();

  /** The NVIDIA driver's per-GPU directories (PCI address, UUID): the container's /proc shows the host's. */
  @WithDefault("/proc/driver/nvidia/gpus")
  Path nvidiaGpus();

  /** How often the kubelet is asked; each round is one List call and, for a changed pod, one patch. */
  @WithDefault("5s")
  Duration period();

  /** Port of the health listener (plain HTTP, {@code /q/health/live|ready|started}), the agent's only one. */
  @WithDefault("8080")
  int healthPort();

  /**
   * The pod's service account as the kubelet mounts it: its {@code token} (read again as it
   * rotates) and the API server's CA, {@code ca.crt}.
   */
  @WithDefault("/var/run/secrets/kubernetes.io/serviceaccount")
  Path serviceAccount();

  /** How long one call to the kubelet may take. */
  @WithDefault("3s")
  Duration callTimeout();

  /**
   * The whole-GPU resources whose devices are recorded (the policy's {@code topology.resourceName}
   * and {@code topology.wholeGpuResource}); memory shares are placed by annotations their device
   * plugin obeys, and are never recorded.
   */
  @WithDefault("nvidia.com/gpu,aliyun.com/gpu")
  List<String> resources();

  /** The device plugin that hands bind's whole-GPU choice to the containers. */
  DevicePluginConfig devicePlugin();

  /** Settings of the device plugin ({@code gpu-admission.node-agent.device-plugin.*}). */
  interface DevicePluginConfig {
    /** When to serve. */
    enum Serve {
      /** On nodes labelled {@code ack.node.gpu.schedule=topology} (read once at start). */
      TOPOLOGY_NODES,
      ALWAYS,
      NEVER
    }

    @WithDefault("topology-nodes")
    Serve serve();

    /** The kubelet's device-plugins directory (its kubelet.sock, and the plugin's socket). */
    @WithDefault("/var/lib/kubelet/device-plugins")
    Path dir();

    /** The resources served, one socket each; never nvidia.com/gpu (NVIDIA's plugin owns it). */
    @WithDefault("aliyun.com/gpu")
    List<String> resources();

    /** How Allocate names the GPUs: {@code env} (NVIDIA_VISIBLE_DEVICES=UUIDs) or {@code cdi} (nvidia.com/gpu=UUID). */
    @WithDefault("env")
    DevicePluginServer.Handover handover();

    /** Where sysfs lists PCI devices (each GPU's numa_node). */
    @WithDefault("/sys/bus/pci/devices")
    Path pciDevices();

    /**
     * The GPUs' link matrix as {@code nvidia-smi topo -m} prints it, for the choice when no bound
     * pod fits; without it, GPUs of one NUMA node count as closer.
     */
    Optional<Path> topologyFile();
  }
}
