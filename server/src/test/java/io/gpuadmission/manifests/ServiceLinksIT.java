package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.gpuadmission.node.FakeKubelet;
import io.gpuadmission.node.HttpWatchProxy;
import io.gpuadmission.testing.MockApiServer;
import io.gpuadmission.testing.PackagedApp;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server and node agent started with the environment the kubelet gives their pods:
 * the Deployment's and the DaemonSet's own {@code env}, over the service links of every Service
 * the installs create, of the API server's Service {@code kubernetes}, and of a Service named
 * after each program (a metrics Service one may add). Both must become ready, as their readiness
 * probes ask. A setting read from a name a link makes (the Service gpu-admission makes {@code
 * GPU_ADMISSION_PORT=tcp://<ClusterIP>:443}, unusable as a port) stops a program here.
 */
class ServiceLinksIT {
  private static final Duration READY_WITHIN = Duration.ofSeconds(90);
  /** Names a Service may yet take: links are made from the Service's name. */
  private static final List<String> SERVICES_TO_COME = List.of("gpu-admission-node-agent", "gpu-admission-metrics");
  /**
   * The server's address in this test, as a pod has its own: the server keeps the port its probes
   * name (its default, 8443). A port given in the environment would hide what a pod's environment
   * does to the port's own setting; an address of its own clashes with no one's listener.
   */
  private static final String SERVER_ADDRESS = "127.0.84.43";
  /** The node agent's program as the node-agent module packages it (the reactor builds it first). */
  private static final Path AGENT_JAR = Path.of("node-agent/target/node-agent/node-agent.jar").toAbsolutePath();
  /** Its native executable, in the native build (server/pom.xml, profile native). */
  private static final Path AGENT_EXECUTABLE = Path.of(System.getProperty("node-agent.executable", "node-agent-runner")).toAbsolutePath();

  @TempDir Path workingDirectory;

  /** Every Service the installs create (kustomize renders what the chart does: ChartEquivalenceTest), and those to come. */
  private static Map<String, String> serviceLinks() throws Exception {
    var services = new TreeMap<String, io.fabric8.kubernetes.api.model.Service>();
    // The default install, and every component on cert-manager's: together every Service of Overlays.ALL.
    var installs = List.of("manifests", Overlays.combined(), "manifests/control-plane");
    for (var install : installs) {
      for (HasMetadata object : Overlays.renderObjects(install)) {
        if (object instanceof io.fabric8.kubernetes.api.model.Service service && !"None".equals(service.getSpec().getClusterIP())) {
          services.putIfAbsent(service.getMetadata().getName(), service);
        }
      }
    }
    assertThat(services).containsKeys("gpu-admission", "gpu-admission-placement", "gpu-admission-extender");
    var links = new LinkedHashMap<String, String>();
    links.putAll(PodEnvironment.serviceLinks("kubernetes", "10.96.0.1", List.of(new ServicePortBuilder().withName("https").withPort(443).build())));
    var address = 10;
    for (var service : services.values()) {
      links.putAll(PodEnvironment.serviceLinks(service, "10.96." + address / 250 + "." + address % 250));
      address += 37;
    }
    for (var name : SERVICES_TO_COME) {
      links.putAll(PodEnvironment.serviceLinks(name, "10.96.7." + address % 250,
          List.of(new ServicePortBuilder().withName("metrics").withPort(9090).build())));
      address += 37;
    }
    return links;
  }

  /**
   * The install's workload: as kustomize renders it, or in the native build the chart's with
   * image.flavour native (the node agent's DaemonSet enabled), whose commands and options start
   * the native executables.
   */
  private static <T extends HasMetadata> T workload(Class<T> kind, String install) throws Exception {
    var objects = PackagedApp.isNative()
        ? Overlays.objects(Chart.template(List.of("image.flavour=native", "nodeAgent.enabled=true")))
        : Overlays.renderObjects(install);
    return objects.stream().filter(kind::isInstance).map(kind::cast).findFirst().orElseThrow();
  }

  private static int containerPort(Container container, String name) {
    return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst().orElseThrow().getContainerPort();
  }

  private static int freePort() throws Exception {
    try (var socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @Test
  void theServerAndTheNodeAgentBecomeReadyWithTheirPodsEnvironment() throws Exception {
    var links = serviceLinks();
    assertThat(links).containsEntry("GPU_ADMISSION_PORT", "tcp://" + links.get("GPU_ADMISSION_SERVICE_HOST") + ":443")
        .containsEntry("KUBERNETES_SERVICE_HOST", "10.96.0.1").containsKey("GPU_ADMISSION_NODE_AGENT_PORT_9090_TCP_ADDR");

    var server = workload(Deployment.class, "manifests").getSpec().getTemplate().getSpec().getContainers().getFirst();
    var agent = workload(DaemonSet.class, "manifests/node-agent").getSpec().getTemplate().getSpec().getContainers().getFirst();
    var serverProbe = server.getReadinessProbe().getHttpGet();
    var agentProbe = agent.getReadinessProbe().getHttpGet();
    assertThat(serverProbe.getPort().getStrVal()).isEqualTo("https");
    var serverReady = "https://" + SERVER_ADDRESS + ":" + containerPort(server, "https") + serverProbe.getPath();

    var node = "cn-beijing.i-topo-v100-a";
    try (var cluster = MockApiServer.start(4, null)) {
      String apiServer;
      try (var admin = cluster.admin()) {
        apiServer = admin.getMasterUrl().toString();
      }
      var serverEnv = PodEnvironment.of(links, server,
          Map.of("metadata.namespace", "gpu-admission", "metadata.name", "gpu-admission-6d9f8b7c5d-x2x7q"));
      // What in a pod comes from its ServiceAccount (the API server's address and credentials).
      serverEnv.put("QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", apiServer);
      serverEnv.put("QUARKUS_HTTP_HOST", SERVER_ADDRESS);

      Files.createDirectories(workingDirectory.resolve("node/gpus"));
      Files.createDirectories(workingDirectory.resolve("node/device-plugins"));
      Files.createDirectories(workingDirectory.resolve("node/pci"));
      var agentEnv = PodEnvironment.of(links, agent, Map.of("spec.nodeName", node));
      var healthPort = freePort();
      // The DaemonSet's mounts, here directories of this test; its port, one free here.
      agentEnv.put("GPU_ADMISSION_NODE_AGENT_SOCKET", workingDirectory.resolve("node/pod-resources/kubelet.sock").toString());
      agentEnv.put("GPU_ADMISSION_NODE_AGENT_NVIDIA_GPUS", workingDirectory.resolve("node/gpus").toString());
      agentEnv.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_DIR", workingDirectory.resolve("node/device-plugins").toString());
      agentEnv.put("GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_PCI_DEVICES", workingDirectory.resolve("node/pci").toString());
      agentEnv.put("GPU_ADMISSION_NODE_AGENT_HEALTH_PORT", Integer.toString(healthPort));
      var agentReady = "http://127.0.0.1:" + healthPort + agentProbe.getPath();
      // The DaemonSet's command: its JVM options from JAVA_OPTS_APPEND, the agent's own jar (here
      // the node-agent module's build, in the image /deployments/node-agent/); in the native
      // build the native flavour's: the agent's executable with its options.
      List<String> daemonSetCommand;
      if (PackagedApp.isNative()) {
        assertThat(agent.getCommand()).containsExactly("sh", "-c", "exec /deployments/node-agent/node-agent $JAVA_OPTS_APPEND");
        daemonSetCommand = List.of("sh", "-c", "exec \"$0\" $JAVA_OPTS_APPEND", AGENT_EXECUTABLE.toString());
      } else {
        assertThat(agent.getCommand()).containsExactly("sh", "-c", "exec java $JAVA_OPTS_APPEND -jar /deployments/node-agent/node-agent.jar");
        daemonSetCommand = List.of("sh", "-c", "exec \"$0\" $JAVA_OPTS_APPEND -jar \"$1\"",
            Path.of(System.getProperty("java.home"), "bin", "java").toString(), AGENT_JAR.toString());
      }

      Files.createDirectories(workingDirectory.resolve("server"));
      Files.createDirectories(workingDirectory.resolve("node/pod-resources"));
      try (var kubelet = FakeKubelet.start(workingDirectory.resolve("node/pod-resources"));
          var proxy = HttpWatchProxy.start(apiServer)) {
        agentEnv.put("QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL", proxy.url());
        try (var serverProcess = PackagedApp.start(workingDirectory.resolve("server"), serverEnv);
            var agentProcess = PackagedApp.startCommand(workingDirectory.resolve("node"), agentEnv, daemonSetCommand)) {
          var http = HttpClient.newBuilder().sslContext(trustingAnyCertificate()).build();
          var deadline = System.nanoTime() + READY_WITHIN.toNanos();
          while (System.nanoTime() < deadline && serverProcess.alive() && agentProcess.alive()
              && !(probe(http, serverReady).startsWith("200 ") && probe(http, agentReady).startsWith("200 "))) {
            Thread.sleep(250);
          }
          assertThat(serverProcess.alive()).as("the server runs; its output:%n%s%s", serverProcess.stdout(), serverProcess.stderr()).isTrue();
          assertThat(agentProcess.alive()).as("the node agent runs; its output:%n%s%s", agentProcess.stdout(), agentProcess.stderr()).isTrue();
          assertThat(probe(http, serverReady)).as("the server's readiness; its output:%n%s%s", serverProcess.stdout(), serverProcess.stderr())
              .startsWith("200 ");
          assertThat(probe(http, agentReady)).as("the node agent's readiness; its output:%n%s%s", agentProcess.stdout(), agentProcess.stderr())
              .startsWith("200 ");
          // Nothing said of a setting it could not use.
          assertThat(serverProcess.stdout() + serverProcess.stderr() + agentProcess.stdout() + agentProcess.stderr())
              .doesNotContain("SRCFG").doesNotContain("Unrecognized configuration key");
        }
      }
    }
  }

  /** As the kubelet's HTTPS probe: it checks no certificate. */
  private static javax.net.ssl.SSLContext trustingAnyCertificate() throws Exception {
    // Extended: a plain X509TrustManager gets the JDK's host name check added around it.
    var trustAll = new javax.net.ssl.X509ExtendedTrustManager() {
      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType) {}

      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType, java.net.Socket socket) {}

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType, java.net.Socket socket) {}

      @Override
      public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine) {}

      @Override
      public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine) {}

      @Override
      public java.security.cert.X509Certificate[] getAcceptedIssuers() {
        return new java.security.cert.X509Certificate[0];
      }
    };
    var context = javax.net.ssl.SSLContext.getInstance("TLS");
    context.init(null, new javax.net.ssl.TrustManager[] {trustAll}, null);
    return context;
  }

  /** The probe's answer: status and body, or what kept it from answering. */
  private static String probe(HttpClient http, String url) {
    try {
      var answer = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString());
      return answer.statusCode() + " " + answer.body();
    } catch (java.io.IOException e) {
      return "no answer: " + e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }
}
