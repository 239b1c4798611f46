package io.gpuadmission.node;

import io.gpuadmission.allocator.LinkMatrix;
import io.gpuadmission.allocator.TopologyParser;
import io.gpuadmission.node.api.ApiServer;
import io.smallrye.config.ConfigValidationException;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.smallrye.config.SysPropConfigSource;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.jboss.logging.Logger;

/**
 * The node agent's program (the DaemonSet's: {@code java -jar node-agent.jar}, this module's
 * target/node-agent/): it runs on every GPU node, on the path of every GPU container start, so it
 * is built of only what the agent uses (its configuration, a small API server client on the JDK's
 * HTTP client ({@link ApiServer}), the kubelet's PodResources client and the device plugin on
 * grpc-java, the health listener), none of the server's Quarkus, REST layer, metrics, TLS or
 * fabric8.
 *
 * <p>Its settings are {@link NodeAgentConfig}'s, read by SmallRye Config (the library Quarkus
 * reads them with) from system properties, the environment ({@code GPU_ADMISSION_NODE_AGENT_*})
 * and application.properties, in that order of precedence; durations are written as the
 * server's ({@code 5s}, {@code 500ms}, {@code PT5S}).
 */
public final class NodeAgentMain implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(NodeAgentMain.class);

  /** How long one request to the API server may take (a watch: until its headers). */
  private static final Duration API_TIMEOUT = Duration.ofSeconds(10);
  /** The longest pause between two reads of the node's own Node while the API server does not answer (client-go's reflector's). */
  private static final Duration TOPOLOGY_BACKOFF_MAX = Duration.ofSeconds(30);

  private final ApiServer client;
  private final PodResourcesClient kubelet;
  private final NodeAgent agent;
  private final NodeAgentHealth probes;
  private final NodeHealthListener health;
  private final Optional<TopologyNodeCheck> topology;

  private NodeAgentMain(ApiServer client, PodResourcesClient kubelet, NodeAgent agent, NodeAgentHealth probes, NodeHealthListener health,
      Optional<TopologyNodeCheck> topology) {
    this.client = client;
    this.kubelet = kubelet;
    this.agent = agent;
    this.probes = probes;
    this.health = health;
    this.topology = topology;
  }

  /** Runs the agent until the process is told to stop; a setting it cannot work with ends it with status 1 and one line saying which. */
  public static void main(String... args) {
    var started = System.nanoTime();
    NodeAgentLogging.useLogManager();
    SmallRyeConfig config;
    try {
      config = config(List.of());
    } catch (IllegalArgumentException e) {
      NodeAgentLogging.configure(Optional.empty());
      LOG.error("node agent not started: " + e.getMessage());
      System.exit(1);
      return;
    }
    NodeAgentLogging.configure(Optional.of(config));
    NodeAgentMain running;
    try {
      running = start(config);
    } catch (RuntimeException e) {
      // A setting it cannot work with: one line; the DaemonSet restarts the pod. The trace, for what
      // no setting explains, at DEBUG. (An API server that does not answer is waited for, not this.)
      LOG.error("node agent not started: " + reason(e));
      LOG.debug("node agent start failed", e);
      System.exit(1);
      return;
    }
    var stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      running.close();
      stopped.countDown();
    }, "node-agent-shutdown"));
    LOG.infof("gpu-admission node agent started in %d ms (node-agent mode: no Quarkus, no webhook listener, no server informers,"
        + " no leader election)", (System.nanoTime() - started) / 1_000_000);
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The agent's settings from system properties, the environment and application.properties ({@code more} above them). */
  static SmallRyeConfig config(List<ConfigSource> more) {
    // The sources addDefaultSources() would add, but the file read as a plain stream: SmallRye reads
    // a URL's properties (and looks for microprofile-config.properties) through a zip file system
    // over the jar, which the agent would keep for nothing (bench/README.md, "Node agent").
    var builder = new SmallRyeConfigBuilder()
        .withSources(new SysPropConfigSource(), new EnvConfigSource(System.getenv(), 300))
        .withSources(more)
        .withConverter(Duration.class, 200, new DurationSetting())
        .withMapping(NodeAgentConfig.class);
    var properties = NodeAgentMain.class.getClassLoader().getResource("application.properties");
    if (properties != null) {
      var values = new Properties();
      try (var in = properties.openStream()) {
        values.load(in);
      } catch (IOException e) {
        throw new IllegalStateException("cannot read " + properties + ": " + e.getMessage(), e);
      }
      var map = new HashMap<String, String>();
      values.forEach((key, value) -> map.put((String) key, (String) value));
      builder.withSources(new PropertiesConfigSource(map, properties.toString(), 250));
    }
    try {
      return builder.build();
    } catch (ConfigValidationException e) {
      var problems = new ArrayList<String>();
      for (int i = 0; i < e.getProblemCount(); i++) {
        problems.add(readable(e.getProblem(i).getMessage()));
      }
      throw new IllegalArgumentException(String.join("; ", problems), e);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(readable(e.getMessage()), e);
    }
  }

  /** SmallRye's words for a setting it cannot read, without its message codes and exception class names. */
  static String readable(String message) {
    return message == null ? "" : message.replaceAll("SRCFG\\d+: ", "")
        .replaceAll("\\b(?:[a-z][a-z0-9_]*\\.)+[A-Z]\\w*(?:Exception|Error): ", "").trim();
  }

  /** Starts the agent: its pod cache, its rounds, the device plugin when this node is to have one, and the health listener. */
  static NodeAgentMain start(SmallRyeConfig settings) {
    var config = settings.getConfigMapping(NodeAgentConfig.class);
    var node = config.nodeName().filter(n -> !n.isBlank()).orElseThrow(() -> new IllegalStateException(
        "gpu-admission.node-agent.node-name is not set: the DaemonSet passes the node's name as GPU_ADMISSION_NODE_AGENT_NODE_NAME"
            + " (fieldRef spec.nodeName)"));
    var url = settings.getOptionalValue("quarkus.kubernetes-client.api-server-url", String.class)
        .or(() -> ApiServer.inClusterUrl(System.getenv()))
        .filter(u -> settings.getOptionalValue("gpu-admission.cluster.enabled", Boolean.class).orElse(true))
        .orElseThrow(() -> new IllegalStateException("the node agent needs the API server to record GPUs on pods: run it in a pod"
            + " (KUBERNETES_SERVICE_HOST) or set quarkus.kubernetes-client.api-server-url"));
    var client = ApiServer.at(url, config.serviceAccount(),
        settings.getOptionalValue("quarkus.kubernetes-client.trust-certs", Boolean.class).orElse(false), API_TIMEOUT);
    PodResourcesClient kubelet = null;
    NodeAgent agent = null;
    Optional<TopologyNodeCheck> topology = Optional.empty();
    try {
      kubelet = new PodResourcesClient(config.socket(), config.callTimeout());
      var index = DeviceIndex.fromDriver(config.nvidiaGpus(), Clock.systemUTC());
      var plugin = pluginSettings(config);
      var serve = config.devicePlugin().serve();
      var agentSettings = new NodeAgent.Settings(node, new HashSet<>(config.resources()), config.period(),
          serve == NodeAgentConfig.DevicePluginConfig.Serve.ALWAYS ? plugin : Optional.empty());
      agent = NodeAgent.create(client, kubelet, index, agentSettings, Clock.systemUTC()).start();
      if (serve == NodeAgentConfig.DevicePluginConfig.Serve.TOPOLOGY_NODES) {
        // Its own Node says: read on a thread of its own, asked again while the API server does not answer.
        var started = agent;
        topology = Optional.of(TopologyNodeCheck.start(client, node, NodeAgent.WATCH_BACKOFF, TOPOLOGY_BACKOFF_MAX, isTopology -> {
          if (isTopology) {
            started.servePlugin(plugin.orElseThrow());
          }
        }));
      }
      var probes = new NodeAgentHealth(agent, config.period(), config.callTimeout(), Clock.systemUTC());
      var health = NodeHealthListener.start(config.healthPort(), probes);
      return new NodeAgentMain(client, kubelet, agent, probes, health, topology);
    } catch (RuntimeException e) {
      topology.ifPresent(TopologyNodeCheck::close);
      if (agent != null) {
        agent.close();
      }
      if (kubelet != null) {
        kubelet.close();
      }
      client.close();
      throw e;
    }
  }

  /** The device plugin's settings, unless it is never served (whether this node is to have one may be learned later). */
  private static Optional<DevicePlugin.Settings> pluginSettings(NodeAgentConfig config) {
    var plugin = config.devicePlugin();
    if (plugin.serve() == NodeAgentConfig.DevicePluginConfig.Serve.NEVER) {
      return Optional.empty();
    }
    Optional<LinkMatrix> links = plugin.topologyFile().map(file -> {
      try {
        return TopologyParser.parse(Files.readString(file));
      } catch (IOException | IllegalArgumentException e) {
        throw new IllegalStateException("gpu-admission.node-agent.device-plugin.topology-file " + file + ": " + e.getMessage(), e);
      }
    });
    return Optional.of(new DevicePlugin.Settings(plugin.dir(), plugin.resources(), plugin.handover(), config.nvidiaGpus(),
        plugin.pciDevices(), links, new HashSet<>(config.resources()), config.callTimeout(), GpuHandover.CACHE_LAG));
  }

  /** The agent started, for tests. */
  NodeAgent agent() {
    return agent;
  }

  /** Whether the health listener reports the agent ready, for tests. */
  boolean ready() {
    return probes.ready().status() == 200;
  }

  @Override
  public void close() {
    topology.ifPresent(TopologyNodeCheck::close);
    health.close();
    agent.close();
    kubelet.close();
    client.close();
  }

  /** The failure and, where it differs, its root cause ("Connection refused"). */
  static String reason(Throwable e) {
    var root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    var message = String.valueOf(e.getMessage()).replaceAll("\\s+in namespace: \\[null]", "").replaceAll("\\s+", " ").strip();
    if (root == e || root.getMessage() == null || message.contains(root.getMessage())) {
      return message;
    }
    return (message.endsWith(".") ? message.substring(0, message.length() - 1) : message) + ": " + root.getMessage();
  }
}
