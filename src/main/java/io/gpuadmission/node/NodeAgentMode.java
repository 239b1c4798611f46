package io.gpuadmission.node;

import io.gpuadmission.cluster.ClusterConnection;
import io.gpuadmission.mode.NodeAgentStartup;
import io.quarkus.runtime.ShutdownEvent;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.time.Clock;
import java.util.HashSet;
import java.util.Optional;

/**
 * Runs the node agent in node-agent mode ({@code gpu-admission.mode=node-agent}, env
 * GPU_ADMISSION_MODE): it starts on {@link NodeAgentStartup}, which only that mode fires, and
 * serves its health on a listener of its own ({@link NodeHealthListener}).
 */
@ApplicationScoped
public class NodeAgentMode {
  private final NodeAgentConfig config;
  private final ClusterConnection cluster;
  private final Vertx vertx;
  private volatile NodeAgent agent;
  private PodResourcesClient kubelet;
  private NodeHealthListener health;

  public NodeAgentMode(NodeAgentConfig config, ClusterConnection cluster, Vertx vertx) {
    this.config = config;
    this.cluster = cluster;
    this.vertx = vertx;
  }

  /** The running agent, if this process is one. */
  public Optional<NodeAgent> agent() {
    return Optional.ofNullable(agent);
  }

  void start(@Observes NodeAgentStartup event) {
    var node = config.nodeName().filter(n -> !n.isBlank()).orElseThrow(() -> new IllegalStateException(
        "gpu-admission.node-agent.node-name is not set: the DaemonSet passes the node's name as GPU_ADMISSION_NODE_AGENT_NODE_NAME"
            + " (fieldRef spec.nodeName)"));
    if (!cluster.available()) {
      throw new IllegalStateException("the node agent needs the API server (in a pod, or KUBECONFIG) to record GPUs on pods");
    }
    kubelet = new PodResourcesClient(config.socket(), config.callTimeout());
    var index = DeviceIndex.fromDriver(config.nvidiaGpus(), Clock.systemUTC());
    var settings = new NodeAgent.Settings(node, new HashSet<>(config.resources()), config.period(), pluginSettings(node));
    agent = NodeAgent.create(cluster.client(), kubelet, index, settings, Clock.systemUTC()).start();
    health = NodeHealthListener.start(vertx, config.healthPort(),
        new NodeAgentHealth(agent, config.period(), config.callTimeout(), Clock.systemUTC()));
  }

  /** The device plugin's settings when this node is to have one. */
  private Optional<DevicePlugin.Settings> pluginSettings(String node) {
    var plugin = config.devicePlugin();
    var serve = switch (plugin.serve()) {
      case ALWAYS -> true;
      case NEVER -> false;
      case TOPOLOGY_NODES -> DevicePlugin.topologyNode(cluster.client(), node);
    };
    if (!serve) {
      return Optional.empty();
    }
    Optional<io.gpuadmission.allocator.LinkMatrix> links = plugin.topologyFile().map(file -> {
      try {
        return io.gpuadmission.allocator.TopologyParser.parse(java.nio.file.Files.readString(file));
      } catch (java.io.IOException | IllegalArgumentException e) {
        throw new IllegalStateException("gpu-admission.node-agent.device-plugin.topology-file " + file + ": " + e.getMessage(), e);
      }
    });
    return Optional.of(new DevicePlugin.Settings(plugin.dir(), plugin.resources(), plugin.handover(), config.nvidiaGpus(),
        plugin.pciDevices(), links, new HashSet<>(config.resources()), config.callTimeout()));
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (health != null) {
      health.close();
    }
    if (agent != null) {
      agent.close();
    }
    if (kubelet != null) {
      kubelet.close();
    }
  }
}
