package io.gpuadmission.bench;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A mock API server holding a cluster of Kubernetes' documented size limits, for the scale
 * benchmark (bench/scale.sh): {@code nodes} GPU nodes (8 × 16 GiB V100, ACK's labels, and
 * {@code images} container images in their status, as real nodes carry: most of a Node's bytes)
 * and {@code pods} pods, of which {@code gpuPods} bound 4 GiB GPU-share pods (gpushare's
 * annotations) and the rest CPU pods as a Deployment's ReplicaSet makes them (owner, labels,
 * managed fields, probes, two containers, a projected token volume, a status with conditions and
 * container statuses). Nodes and pods are made on the fly, page by page, from their index: the
 * LISTs of all nodes and all pods are answered in pages ({@code limit}/{@code continue}) as
 * kube-apiserver answers them, and a LIST without a limit is answered whole. Everything else
 * (namespaces, the policy ConfigMap, the placement Lease, Events, a pod to bind, the watches) is
 * the fabric8 mock's CRUD store.
 *
 * <p>Prints one line per LIST it answered in full ({@code listed nodes limit=… items=… pages_served_so_far=…}).
 * Creating the file {@code RELIST} (next to the working directory) restarts the server on the
 * same port: each watch that resumes is answered 410 Gone once, as kube-apiserver answers a
 * compacted resourceVersion, and the informers list everything again.
 *
 * <p>Usage: {@code ScaleCluster PORT NODES PODS GPU_PODS IMAGES}
 */
public final class ScaleCluster {
  private static final java.util.logging.Logger MOCK_LOG = java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");
  private static final String LIST_VERSION = "100000";

  private final int nodes;
  private final int pods;
  private final int gpuPods;
  private final int images;
  private final KubernetesCrudDispatcher store = new KubernetesCrudDispatcher(List.of());
  private final Set<String> goneSent = ConcurrentHashMap.newKeySet();
  private final Map<String, AtomicLong> pages = new ConcurrentHashMap<>();
  private volatile boolean restarted;

  public ScaleCluster(int nodes, int pods, int gpuPods, int images) {
    this.nodes = nodes;
    this.pods = pods;
    this.gpuPods = gpuPods;
    this.images = images;
  }

  public static void main(String[] args) throws Exception {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    var port = Integer.parseInt(args[0]);
    var cluster = new ScaleCluster(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]));
    var server = cluster.serve(port);
    cluster.seed(port);
    System.out.printf("ready: http://127.0.0.1:%d nodes=%d pods=%d gpuPods=%d images=%d node_json_bytes=%d cpu_pod_json_bytes=%d gpu_pod_json_bytes=%d%n",
        port, cluster.nodes, cluster.pods, cluster.gpuPods, cluster.images, cluster.node(0).length(),
        cluster.pod(cluster.gpuPods).length(), cluster.pod(0).length());
    var relist = Path.of("RELIST");
    while (true) {
      Thread.sleep(300);
      if (Files.deleteIfExists(relist)) {
        server.destroy();
        cluster.goneSent.clear();
        cluster.restarted = true;
        Thread.sleep(1000);
        server = cluster.serve(port);
        System.out.println("restarted: resumed watches are answered 410 Gone once");
      }
    }
  }

  private KubernetesMockServer serve(int port) {
    var server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher(), false);
    server.init(InetAddress.getLoopbackAddress(), port);
    return server;
  }

  private Dispatcher dispatcher() {
    return new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        var generated = generated(request);
        return generated != null ? generated : store.dispatch(request);
      }
    };
  }

  /**
   * The answer to a LIST of all nodes or all pods (a page of them), or to a watch that resumes
   * across a restart (410 Gone); null for any other request.
   */
  public MockResponse generated(RecordedRequest request) {
    var path = request.getPath();
    var query = query(path);
    var base = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
    var watch = "true".equals(query.get("watch"));
    if (watch && restarted && query.getOrDefault("resourceVersion", "").matches("[1-9].*") && goneSent.add(base)) {
      return new MockResponse().setResponseCode(410).setBody(
          "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":410,\"message\":\"too old resource version\"}");
    }
    var plain = "GET".equals(request.getMethod()) && !watch && !query.containsKey("labelSelector") && !query.containsKey("fieldSelector");
    if (plain && base.equals("/api/v1/nodes")) {
      return page("nodes", "NodeList", nodes, query, this::node);
    }
    if (plain && base.equals("/api/v1/pods")) {
      return page("pods", "PodList", pods, query, this::pod);
    }
    return null;
  }

  /** One page of a generated list; the continue token is the index of the next object. */
  private MockResponse page(String what, String kind, int total, Map<String, String> query, java.util.function.IntFunction<String> object) {
    var from = query.containsKey("continue") ? Integer.parseInt(query.get("continue")) : 0;
    var limit = query.containsKey("limit") ? Integer.parseInt(query.get("limit")) : total;
    var to = Math.min(total, from + Math.max(1, limit));
    var body = new StringBuilder(Math.max(1, to - from) * 8_000);
    body.append("{\"kind\":\"").append(kind).append("\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"").append(LIST_VERSION).append('"');
    if (to < total) {
      body.append(",\"continue\":\"").append(to).append("\",\"remainingItemCount\":").append(total - to);
    }
    body.append("},\"items\":[");
    for (int i = from; i < to; i++) {
      if (i > from) {
        body.append(',');
      }
      body.append(object.apply(i));
    }
    body.append("]}");
    var served = pages.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    if (to >= total) {
      System.out.printf("listed %s limit=%s items=%d pages_served_so_far=%d%n", what, query.getOrDefault("limit", "none"), total, served);
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(body.toString());
  }

  private static Map<String, String> query(String path) {
    var out = new HashMap<String, String>();
    var at = path.indexOf('?');
    if (at < 0) {
      return out;
    }
    for (var pair : path.substring(at + 1).split("&")) {
      var eq = pair.indexOf('=');
      if (eq > 0) {
        out.put(pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  static String nodeName(int n) {
    return String.format("gpu-node-%05d", n);
  }

  /** A GPU node as kube-apiserver returns an ACK node: labels, annotations, managed fields, a full status. */
  public String node(int n) {
    var name = nodeName(n);
    var b = new StringBuilder(16_000);
    b.append("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"").append(name)
        .append("\",\"uid\":\"").append(uid("node", n)).append("\",\"resourceVersion\":\"").append(1000 + n)
        .append("\",\"creationTimestamp\":\"2026-01-12T08:14:03Z\",\"labels\":{")
        .append("\"ack.aliyun.com\":\"c2b1f3e4d5a6b7c8d9e0f1a2b3c4d5e6f\",\"ack.node.gpu.schedule\":\"cgpu\",")
        .append("\"aliyun.accelerator/nvidia_count\":\"8\",\"aliyun.accelerator/nvidia_mem\":\"16160MiB\",")
        .append("\"aliyun.accelerator/nvidia_name\":\"Tesla-V100-SXM2-16GB\",\"alibabacloud.com/nodepool-id\":\"np").append(n % 20)
        .append("a1b2c3d4e5f6a7b8c9d0\",\"beta.kubernetes.io/arch\":\"amd64\",\"beta.kubernetes.io/instance-type\":\"ecs.gn6v-c8g1.16xlarge\",")
        .append("\"beta.kubernetes.io/os\":\"linux\",\"failure-domain.beta.kubernetes.io/region\":\"cn-beijing\",")
        .append("\"failure-domain.beta.kubernetes.io/zone\":\"cn-beijing-").append((char) ('a' + n % 6)).append("\",")
        .append("\"kubernetes.io/arch\":\"amd64\",\"kubernetes.io/hostname\":\"").append(name).append("\",\"kubernetes.io/os\":\"linux\",")
        .append("\"node.kubernetes.io/instance-type\":\"ecs.gn6v-c8g1.16xlarge\",\"topology.diskplugin.csi.alibabacloud.com/zone\":\"cn-beijing-a\",")
        .append("\"topology.kubernetes.io/region\":\"cn-beijing\",\"topology.kubernetes.io/zone\":\"cn-beijing-").append((char) ('a' + n % 6)).append("\"},")
        .append("\"annotations\":{\"csi.volume.kubernetes.io/nodeid\":\"{\\\"diskplugin.csi.alibabacloud.com\\\":\\\"i-2ze").append(n)
        .append("\\\",\\\"nasplugin.csi.alibabacloud.com\\\":\\\"i-2ze").append(n).append("\\\",\\\"ossplugin.csi.alibabacloud.com\\\":\\\"i-2ze").append(n).append("\\\"}\",")
        .append("\"flannel.alpha.coreos.com/backend-data\":\"{\\\"VtepMAC\\\":\\\"0a:58:0a:").append(n % 100).append(":00:01\\\"}\",")
        .append("\"flannel.alpha.coreos.com/backend-type\":\"vxlan\",\"flannel.alpha.coreos.com/kube-subnet-manager\":\"true\",")
        .append("\"flannel.alpha.coreos.com/public-ip\":\"192.168.").append(n / 250 % 250).append('.').append(n % 250).append("\",")
        .append("\"node.alpha.kubernetes.io/ttl\":\"0\",\"volumes.kubernetes.io/controller-managed-attach-detach\":\"true\"},")
        .append("\"managedFields\":[")
        .append("{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-01-12T08:14:03Z\",\"fieldsType\":\"FieldsV1\",")
        .append("\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},\"f:volumes.kubernetes.io/controller-managed-attach-detach\":{}},")
        .append("\"f:labels\":{\".\":{},\"f:beta.kubernetes.io/arch\":{},\"f:beta.kubernetes.io/os\":{},\"f:kubernetes.io/arch\":{},")
        .append("\"f:kubernetes.io/hostname\":{},\"f:kubernetes.io/os\":{}}},\"f:spec\":{\"f:providerID\":{}}}},")
        .append("{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-26T07:55:12Z\",\"fieldsType\":\"FieldsV1\",")
        .append("\"fieldsV1\":{\"f:status\":{\"f:allocatable\":{\"f:aliyun.com/gpu-count\":{},\"f:aliyun.com/gpu-mem\":{},\"f:nvidia.com/gpu\":{}},")
        .append("\"f:capacity\":{\"f:aliyun.com/gpu-count\":{},\"f:aliyun.com/gpu-mem\":{},\"f:nvidia.com/gpu\":{}},")
        .append("\"f:conditions\":{\"k:{\\\"type\\\":\\\"DiskPressure\\\"}\":{\"f:lastHeartbeatTime\":{}},\"k:{\\\"type\\\":\\\"MemoryPressure\\\"}\":{\"f:lastHeartbeatTime\":{}},")
        .append("\"k:{\\\"type\\\":\\\"PIDPressure\\\"}\":{\"f:lastHeartbeatTime\":{}},\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\"f:lastHeartbeatTime\":{},\"f:lastTransitionTime\":{},\"f:message\":{},\"f:reason\":{},\"f:status\":{}}},")
        .append("\"f:images\":{},\"f:nodeInfo\":{\"f:bootID\":{},\"f:kernelVersion\":{}}}},\"subresource\":\"status\"}]},")
        .append("\"spec\":{\"podCIDR\":\"172.20.").append(n % 250).append(".0/25\",\"podCIDRs\":[\"172.20.").append(n % 250)
        .append(".0/25\"],\"providerID\":\"cn-beijing.i-2ze").append(n).append("\"},")
        .append("\"status\":{\"capacity\":{\"aliyun.com/gpu-count\":\"8\",\"aliyun.com/gpu-mem\":\"128\",\"cpu\":\"64\",\"ephemeral-storage\":\"206291996Ki\",")
        .append("\"hugepages-1Gi\":\"0\",\"hugepages-2Mi\":\"0\",\"memory\":\"503578480Ki\",\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"},")
        .append("\"allocatable\":{\"aliyun.com/gpu-count\":\"8\",\"aliyun.com/gpu-mem\":\"128\",\"cpu\":\"63650m\",\"ephemeral-storage\":\"190119300396\",")
        .append("\"hugepages-1Gi\":\"0\",\"hugepages-2Mi\":\"0\",\"memory\":\"496532336Ki\",\"nvidia.com/gpu\":\"8\",\"pods\":\"110\"},\"conditions\":[");
    String[][] conditions = {
      {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
      {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
      {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
      {"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
      {"NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"},
    };
    for (int c = 0; c < conditions.length; c++) {
      b.append(c == 0 ? "" : ",").append("{\"type\":\"").append(conditions[c][0]).append("\",\"status\":\"").append(conditions[c][1])
          .append("\",\"lastHeartbeatTime\":\"2026-11-26T07:55:12Z\",\"lastTransitionTime\":\"2026-01-12T08:15:01Z\",\"reason\":\"")
          .append(conditions[c][2]).append("\",\"message\":\"").append(conditions[c][3]).append("\"}");
    }
    b.append("],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"192.168.").append(n / 250 % 250).append('.').append(n % 250)
        .append("\"},{\"type\":\"Hostname\",\"address\":\"").append(name).append("\"}],")
        .append("\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}},")
        .append("\"nodeInfo\":{\"machineID\":\"").append(uid("machine", n).replace("-", "")).append("\",\"systemUUID\":\"").append(uid("system", n))
        .append("\",\"bootID\":\"").append(uid("boot", n)).append("\",\"kernelVersion\":\"5.10.134-16.3.al8.x86_64\",")
        .append("\"osImage\":\"Alibaba Cloud Linux 3.2104 U10 (OpenAnolis Edition)\",\"containerRuntimeVersion\":\"containerd://1.6.36\",")
        .append("\"kubeletVersion\":\"v1.32.1-aliyun.1\",\"kubeProxyVersion\":\"v1.32.1-aliyun.1\",\"operatingSystem\":\"linux\",\"architecture\":\"amd64\"},")
        .append("\"images\":[");
    for (int i = 0; i < images; i++) {
      var repo = "registry-cn-beijing-vpc.ack.aliyuncs.com/team-" + (i * 7 + n) % 90 + "/service-" + i;
      b.append(i == 0 ? "" : ",").append("{\"names\":[\"").append(repo).append("@sha256:")
          .append(String.format("%064x", (long) i * 1_000_003L + n)).append("\",\"").append(repo).append(":v1.").append(i % 30).append('.').append(n % 10)
          .append("\"],\"sizeBytes\":").append(150_000_000L + i * 13_000_000L).append('}');
    }
    b.append("]}}");
    return b.toString();
  }

  /** Pod {@code p}: a bound GPU-share pod below {@code gpuPods}, a Deployment's CPU pod above. */
  public String pod(int p) {
    var gpu = p < gpuPods;
    var app = "service-" + (p % 400);
    var hash = Integer.toHexString(0x5d7c9b6f + p % 400);
    var name = gpu ? "share-" + p : app + "-" + hash + "-" + Integer.toString(p, 36);
    var namespace = "team-" + (p % 50);
    var node = nodeName(gpu ? p % nodes : (p * 31) % nodes);
    var ip = "172.20." + (p / 250 % 250) + "." + (p % 250);
    var b = new StringBuilder(8_000);
    b.append("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"").append(name).append("\",\"generateName\":\"")
        .append(app).append('-').append(hash).append("-\",\"namespace\":\"").append(namespace).append("\",\"uid\":\"").append(uid("pod", p))
        .append("\",\"resourceVersion\":\"").append(20_000 + p).append("\",\"creationTimestamp\":\"2026-11-20T10:02:11Z\",\"labels\":{\"app\":\"")
        .append(app).append("\",\"pod-template-hash\":\"").append(hash).append("\",\"version\":\"v1\"},\"annotations\":{")
        .append("\"kubectl.kubernetes.io/restartedAt\":\"2026-11-20T10:01:58Z\",\"prometheus.io/port\":\"9090\",\"prometheus.io/scrape\":\"true\"");
    if (gpu) {
      b.append(",\"ALIYUN_COM_GPU_MEM_IDX\":\"").append(p / nodes % 8).append("\",\"ALIYUN_COM_GPU_MEM_POD\":\"4\",\"ALIYUN_COM_GPU_MEM_DEV\":\"16\",")
          .append("\"ALIYUN_COM_GPU_MEM_ASSIGNED\":\"true\",\"ALIYUN_COM_GPU_MEM_ASSUME_TIME\":\"1763632931000000000\"");
    }
    b.append("},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"").append(app).append('-').append(hash)
        .append("\",\"uid\":\"").append(uid("rs", p % 400)).append("\",\"controller\":true,\"blockOwnerDeletion\":true}],")
        .append("\"managedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-20T10:02:11Z\",")
        .append("\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},\"f:kubectl.kubernetes.io/restartedAt\":{},")
        .append("\"f:prometheus.io/port\":{},\"f:prometheus.io/scrape\":{}},\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:app\":{},\"f:pod-template-hash\":{},\"f:version\":{}},")
        .append("\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"").append(uid("rs", p % 400)).append("\\\"}\":{}}},")
        .append("\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},\"f:env\":{},\"f:image\":{},\"f:imagePullPolicy\":{},")
        .append("\"f:livenessProbe\":{},\"f:name\":{},\"f:ports\":{},\"f:readinessProbe\":{},\"f:resources\":{},\"f:volumeMounts\":{}},")
        .append("\"k:{\\\"name\\\":\\\"log-agent\\\"}\":{\".\":{},\"f:image\":{},\"f:name\":{},\"f:resources\":{},\"f:volumeMounts\":{}}},")
        .append("\"f:dnsPolicy\":{},\"f:enableServiceLinks\":{},\"f:restartPolicy\":{},\"f:schedulerName\":{},\"f:securityContext\":{},")
        .append("\"f:terminationGracePeriodSeconds\":{},\"f:volumes\":{}}}},")
        .append("{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-20T10:02:19Z\",\"fieldsType\":\"FieldsV1\",")
        .append("\"fieldsV1\":{\"f:status\":{\"f:conditions\":{},\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},\"f:phase\":{},")
        .append("\"f:podIP\":{},\"f:podIPs\":{},\"f:startTime\":{}}},\"subresource\":\"status\"}]},")
        .append("\"spec\":{\"volumes\":[{\"name\":\"config\",\"configMap\":{\"name\":\"").append(app).append("-config\",\"defaultMode\":420}},")
        .append("{\"name\":\"logs\",\"emptyDir\":{}},{\"name\":\"kube-api-access-").append(Integer.toString(p % 46656, 36))
        .append("\",\"projected\":{\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},")
        .append("{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},")
        .append("{\"downwardAPI\":{\"items\":[{\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.namespace\"}}]}}],\"defaultMode\":420}}],")
        .append("\"containers\":[{\"name\":\"app\",\"image\":\"registry-cn-beijing-vpc.ack.aliyuncs.com/team-").append(p % 50).append('/').append(app)
        .append(":v1.4.").append(p % 9).append("\",\"ports\":[{\"name\":\"http\",\"containerPort\":8080,\"protocol\":\"TCP\"},{\"name\":\"metrics\",\"containerPort\":9090,\"protocol\":\"TCP\"}],")
        .append("\"env\":[");
    String[][] env = {{"LOG_LEVEL", "info"}, {"JAVA_TOOL_OPTIONS", "-XX:MaxRAMPercentage=70"}, {"SERVICE_NAME", app}, {"REGION", "cn-beijing"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel-collector.observability:4317"}, {"FEATURE_FLAGS", "search,recommendations,checkout-v2"}};
    for (int e = 0; e < env.length; e++) {
      b.append(e == 0 ? "" : ",").append("{\"name\":\"").append(env[e][0]).append("\",\"value\":\"").append(env[e][1]).append("\"}");
    }
    b.append(",{\"name\":\"POD_IP\",\"valueFrom\":{\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"status.podIP\"}}}],")
        .append("\"resources\":{\"limits\":{\"cpu\":\"2\",\"memory\":\"4Gi\"");
    if (gpu) {
      b.append(",\"aliyun.com/gpu-mem\":\"4\"");
    }
    b.append("},\"requests\":{\"cpu\":\"500m\",\"memory\":\"2Gi\"");
    if (gpu) {
      b.append(",\"aliyun.com/gpu-mem\":\"4\"");
    }
    b.append("}},\"volumeMounts\":[{\"name\":\"config\",\"mountPath\":\"/etc/app\"},{\"name\":\"logs\",\"mountPath\":\"/var/log/app\"},")
        .append("{\"name\":\"kube-api-access\",\"readOnly\":true,\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],")
        .append("\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080,\"scheme\":\"HTTP\"},\"initialDelaySeconds\":10,\"timeoutSeconds\":1,\"periodSeconds\":10,\"successThreshold\":1,\"failureThreshold\":3},")
        .append("\"readinessProbe\":{\"httpGet\":{\"path\":\"/ready\",\"port\":8080,\"scheme\":\"HTTP\"},\"timeoutSeconds\":1,\"periodSeconds\":5,\"successThreshold\":1,\"failureThreshold\":3},")
        .append("\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"},")
        .append("{\"name\":\"log-agent\",\"image\":\"registry-cn-beijing-vpc.ack.aliyuncs.com/acs/logtail:v1.8.7\",\"resources\":{\"limits\":{\"cpu\":\"200m\",\"memory\":\"256Mi\"},")
        .append("\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"}},\"volumeMounts\":[{\"name\":\"logs\",\"readOnly\":true,\"mountPath\":\"/var/log/app\"}],")
        .append("\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],")
        .append("\"restartPolicy\":\"Always\",\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"default\",")
        .append("\"serviceAccount\":\"default\",\"nodeName\":\"").append(node).append("\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\",")
        .append("\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300},")
        .append("{\"key\":\"node.kubernetes.io/unreachable\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],")
        .append("\"priority\":0,\"enableServiceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"},")
        .append("\"status\":{\"phase\":\"Running\",\"conditions\":[");
    String[] types = {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"};
    for (int c = 0; c < types.length; c++) {
      b.append(c == 0 ? "" : ",").append("{\"type\":\"").append(types[c]).append("\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-20T10:02:1")
          .append(c).append("Z\"}");
    }
    b.append("],\"hostIP\":\"192.168.").append(p / 250 % 250).append('.').append(p % 250).append("\",\"hostIPs\":[{\"ip\":\"192.168.")
        .append(p / 250 % 250).append('.').append(p % 250).append("\"}],\"podIP\":\"").append(ip).append("\",\"podIPs\":[{\"ip\":\"").append(ip)
        .append("\"}],\"startTime\":\"2026-11-20T10:02:11Z\",\"containerStatuses\":[");
    String[] containers = {"app", "log-agent"};
    for (int c = 0; c < containers.length; c++) {
      b.append(c == 0 ? "" : ",").append("{\"name\":\"").append(containers[c]).append("\",\"state\":{\"running\":{\"startedAt\":\"2026-11-20T10:02:17Z\"}},")
          .append("\"lastState\":{},\"ready\":true,\"restartCount\":0,\"image\":\"registry-cn-beijing-vpc.ack.aliyuncs.com/team/").append(containers[c])
          .append(":v1.4\",\"imageID\":\"registry-cn-beijing-vpc.ack.aliyuncs.com/team/").append(containers[c]).append("@sha256:")
          .append(String.format("%064x", (long) p * 31 + c)).append("\",\"containerID\":\"containerd://").append(String.format("%064x", (long) p * 17 + c))
          .append("\",\"started\":true}");
    }
    b.append("],\"qosClass\":\"Burstable\"}}");
    return b.toString();
  }

  private static String uid(String kind, int n) {
    var h = Integer.toHexString(kind.hashCode() & 0xffff);
    return String.format("%08x-%4s-4%03x-8%03x-%012x", n, h, n % 4096, (n / 4096) % 4096, (long) n * 2654435761L & 0xffffffffffffL).replace(' ', '0');
  }

  /**
   * The namespaces, the policy ConfigMap; GPU share pods are told apart by the built-in default
   * policy. Requests may take long: the benchmark runs at nice 19 on a shared machine, where
   * fabric8's default 10 s timeout made seeding fail.
   */
  private void seed(int port) {
    var config = new ConfigBuilder().withMasterUrl("http://127.0.0.1:" + port).withRequestTimeout(300_000).withRequestRetryBackoffLimit(5).build();
    try (var client = new KubernetesClientBuilder().withConfig(config).build()) {
      for (var ns : List.of("gpu-admission", "kube-system", "bench")) {
        client.resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
      }
      client.resource(new ConfigMapBuilder().withNewMetadata().withName("gpu-admission-policy").withNamespace("gpu-admission").endMetadata()
          .addToData("policy.yaml", "sharedMemory:\n  isolatedPool: cgpu\n").build()).create();
    }
  }
}
