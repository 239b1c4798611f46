package io.gpuadmission.node;

import io.gpuadmission.cluster.ClusterConnection;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.time.Clock;
import java.util.HashSet;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import io.smallrye.health.api.HealthRegistry;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;

/**
 * Starts the node agent when the artifact runs as one ({@code gpu-admission.mode=node-agent}, env
 * GPU_ADMISSION_MODE); in any other mode it does nothing.
 */
@ApplicationScoped
public class NodeAgentMode {
  static final String MODE = "node-agent";

  private final String mode;
  private final NodeAgentConfig config;
  private final ClusterConnection cluster;
  private volatile NodeAgent agent;
  private PodResourcesClient kubelet;

  private final HealthRegistry liveness;
  private final HealthRegistry readiness;

  public NodeAgentMode(
      @ConfigProperty(name = "gpu-admission.mode", defaultValue = "server") String mode,
      NodeAgentConfig config,
      ClusterConnection cluster,
      @Liveness HealthRegistry liveness,
      @Readiness HealthRegistry readiness) {
    this.mode = mode;
    this.config = config;
    this.cluster = cluster;
    this.liveness = liveness;
    this.readiness = readiness;
  }

  public boolean active() {
    return MODE.equals(mode);
  }

  /** The running agent; empty in other modes. */
  public Optional<NodeAgent> agent() {
    return Optional.ofNullable(agent);
  }

  void start(@Observes StartupEvent event) {
    if (!active()) {
      return;
    }
    var node = config.nodeName().filter(n -> !n.isBlank()).orElseThrow(() -> new IllegalStateException(
        "gpu-admission.node-agent.node-name is not set: the DaemonSet passes the node's name as GPU_ADMISSION_NODE_AGENT_NODE_NAME (fieldRef spec.nodeName)"));
    if (!cluster.available()) {
      throw new IllegalStateException("the node agent needs the API server (in a pod, or KUBECONFIG), to record GPUs on pods");
    }
    kubelet = new PodResourcesClient(config.socket(), config.callTimeout());
    var index = DeviceIndex.fromDriver(config.nvidiaGpus(), Clock.systemUTC());
    var settings = new NodeAgent.Settings(node, new HashSet<>(config.resources()), config.period());
    agent = NodeAgent.create(cluster.client(), kubelet, index, settings, Clock.systemUTC()).start();
    NodeAgentHealth.register(agent, config.period(), config.callTimeout(), Clock.systemUTC(), liveness, readiness);
  }

  void stop(@Observes ShutdownEvent event) {
    if (agent != null) {
      agent.close();
    }
    if (kubelet != null) {
      kubelet.close();
    }
  }
}
