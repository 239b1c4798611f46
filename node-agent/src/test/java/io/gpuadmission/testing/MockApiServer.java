package io.gpuadmission.testing;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;

/**
 * A fabric8 mock API server (CRUD mode), seeded with the nodes and namespaces of {@code
 * cluster/nodes.yaml} and {@code cluster/namespaces.yaml} on the test class path, that can be stopped and started again on the same port,
 * as an API server that goes away and comes back with its objects (etcd) intact. The mock keeps
 * no event history, so after a restart each watch that resumes from a resourceVersion is answered
 * 410 Gone once, as kube-apiserver does when that version has been compacted away: the informer
 * lists again. (Resumed watches otherwise miss changes, and on the mock some fail with 400.)
 */
public final class MockApiServer implements AutoCloseable {
  private final KubernetesCrudDispatcher objects = new KubernetesCrudDispatcher(List.of());
  private final java.util.Set<String> goneSent = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** Set by a restart: only watches resuming across an outage are refused. */
  private volatile boolean restarted;
  /** Answers the test puts in place of the store's, for requests it picks. */
  private final java.util.List<java.util.function.Function<RecordedRequest, MockResponse>> instead =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  /** Requests to answer late, once each: the store's answer as it is on arrival, its body sent after a delay. */
  private final java.util.List<Late> late = new java.util.concurrent.CopyOnWriteArrayList<>();

  private record Late(java.util.function.Predicate<RecordedRequest> which, java.time.Duration delay, java.util.concurrent.CompletableFuture<Void> answered) {}

  private final Dispatcher store =
      new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          for (var pending : late) {
            if (pending.which().test(request) && late.remove(pending)) {
              var response = objects.dispatch(request).setBodyDelay(pending.delay());
              pending.answered().complete(null);
              return response;
            }
          }
          for (var answer : instead) {
            var response = answer.apply(request);
            if (response != null) {
              return response;
            }
          }
          request = withoutNodeSelector(request);
          var path = request.getPath();
          var resumes = path.contains("watch=true") && path.matches(".*[?&]resourceVersion=[1-9].*");
          if (restarted && resumes && goneSent.add(path.substring(0, path.indexOf('?')))) {
            return new MockResponse().setResponseCode(410).setBody(
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":410,"
                    + "\"message\":\"too old resource version\"}");
          }
          return objects.dispatch(request);
        }
      };
  /**
   * The mock selects by labels and metadata.name only; a {@code spec.nodeName} field selector (a
   * node agent's watch) would match nothing. It is dropped: such a client then sees every pod, and
   * its own check of each pod's node is what keeps other nodes' pods out.
   */
  private static RecordedRequest withoutNodeSelector(RecordedRequest request) {
    var path = request.getPath();
    var selector = java.util.regex.Pattern.compile("([?&])fieldSelector=spec\\.nodeName(%3D|=)[^&]*&?");
    var matcher = selector.matcher(path);
    if (!matcher.find()) {
      return request;
    }
    var stripped = matcher.replaceFirst("$1").replaceAll("[?&]$", "");
    return new RecordedRequest(request.getHttpVersion(), request.method(), stripped, request.getHeaders(), request.getBody());
  }

  private int port;
  private KubernetesMockServer server;

  /** Starts with the first {@code nodeCount} fixture nodes, the namespaces and a policy. */
  public static MockApiServer start(int nodeCount, String policyYaml) {
    var mock = new MockApiServer();
    mock.server = mock.newServer();
    mock.server.init(InetAddress.getLoopbackAddress(), 0);
    mock.port = mock.server.getPort();
    mock.seed(nodeCount, policyYaml);
    return mock;
  }

  private KubernetesMockServer newServer() {
    return new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), store, false);
  }

  /** From now on, requests {@code answer} returns a response for get that response instead (null: the store's). */
  public void answerInstead(java.util.function.Function<RecordedRequest, MockResponse> answer) {
    instead.add(answer);
  }

  /**
   * The next request {@code which} picks is answered from the objects as they are when it arrives,
   * but its body reaches the client {@code delay} later (a slow API server, a large list): what
   * changes meanwhile is not in it. The future completes when that answer has been read from the store.
   */
  public java.util.concurrent.CompletableFuture<Void> answerLate(java.util.function.Predicate<RecordedRequest> which, java.time.Duration delay) {
    var pending = new Late(which, delay, new java.util.concurrent.CompletableFuture<>());
    late.add(pending);
    return pending.answered();
  }

  public void stop() {
    server.destroy();
    server = null;
  }

  public void restart() {
    goneSent.clear();
    restarted = true;
    try {
      // Let the informers notice the outage and back off, as they would in a real one.
      Thread.sleep(1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    server = newServer();
    server.init(InetAddress.getLoopbackAddress(), port);
  }

  /** The port it listens on, the same across restarts. */
  public int port() {
    return port;
  }

  /** A client for changing objects, as a user would with kubectl. */
  public KubernetesClient admin() {
    return server.createClient();
  }

  public void applyPolicy(String policyYaml) {
    try (var admin = admin()) {
      admin.resource(new ConfigMapBuilder()
          .withNewMetadata().withName("gpu-admission-policy").withNamespace("gpu-admission").endMetadata()
          .addToData("policy.yaml", policyYaml).build()).createOr(existing -> existing.update());
    }
  }

  /** A client for the webhook's informers: fast reconnects, so the test need not wait long. */
  public KubernetesClient informerClient() {
    return new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder().withMasterUrl("http://127.0.0.1:" + port).withNamespace("default")
            .withWatchReconnectInterval(100).withWatchReconnectLimit(-1).withRequestTimeout(2000)
            .withConnectionTimeout(1000).withRequestRetryBackoffLimit(0).build())
        .build();
  }

  private void seed(int nodeCount, String policyYaml) {
    try (var admin = server.createClient()) {
      var nodes = list("cluster/nodes.yaml");
      nodes.getItems().stream().limit(nodeCount).forEach(node -> admin.resource(node).create());
      for (HasMetadata namespace : list("cluster/namespaces.yaml").getItems()) {
        admin.resource(namespace).create();
      }
    }
    if (policyYaml != null) {
      applyPolicy(policyYaml);
    }
  }

  /** A fixture list from the test class path (each module's src/test/resources/cluster/). */
  private static KubernetesList list(String resource) {
    try (var in = MockApiServer.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(resource + " is not on the test class path");
      }
      return new KubernetesSerialization().unmarshal(in, KubernetesList.class);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    if (server != null) {
      stop();
    }
  }
}
