package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * A CRUD mock API server that treats a Binding as the real one does: in the same request it sets
 * the pod's {@code spec.nodeName}, and it refuses (409) a pod already bound and (404) one that is
 * gone. The pod is read and patched in-process, through the CRUD dispatcher, not over HTTP (a
 * nested request would wait on the server thread that is serving this one). {@link #failNext}
 * makes the next Binding fail with a given status, as an overloaded API server would; {@link
 * #pause} leaves some clients' requests unanswered, as a stopped API server or a cut network does.
 */
public final class BindingApiServer extends Dispatcher {
  private static final Pattern BINDINGS = Pattern.compile("/api/v1/namespaces/([^/]+)/bindings");
  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  private final KubernetesMixedDispatcher crud;
  private final AtomicInteger created = new AtomicInteger();
  private volatile int failNext;
  private volatile Predicate<RecordedRequest> paused = request -> false;
  private volatile Runnable onPodPatch = () -> {};

  private BindingApiServer(KubernetesMixedDispatcher crud) {
    this.crud = crud;
  }

  /** A started server with this behaviour. */
  public static Started start() {
    var responses = new HashMap<io.fabric8.mockwebserver.ServerRequest, java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    var dispatcher = new BindingApiServer(new KubernetesMixedDispatcher(responses));
    var server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
    server.init();
    return new Started(server, dispatcher);
  }

  /** The server and its binding behaviour. */
  public record Started(KubernetesMockServer server, BindingApiServer bindings) {
    /**
     * A client of this server without client-side retries: a refused Binding must reach the
     * binder, not be retried away.
     */
    public io.fabric8.kubernetes.client.KubernetesClient client() {
      return server.createClient(b -> b.editOrNewConfig().withRequestRetryBackoffLimit(0).endConfig());
    }

    /** {@link #client()}, naming itself {@code userAgent} so that its requests can be paused. */
    public io.fabric8.kubernetes.client.KubernetesClient client(String userAgent) {
      return server.createClient(b -> b.editOrNewConfig().withRequestRetryBackoffLimit(0).withUserAgent(userAgent).endConfig());
    }
  }

  /** Bindings that succeeded. */
  public int created() {
    return created.get();
  }

  public void failNext(int code) {
    failNext = code;
  }

  /**
   * Leaves the requests that match unanswered for ten minutes (then a 503), as an API server
   * stopped with SIGSTOP, or a network that drops a replica's packets: the client waits out its
   * own timeout. Requests already waiting stay unanswered after {@link #resume}.
   */
  public void pause(Predicate<RecordedRequest> requests) {
    paused = requests;
  }

  public void resume() {
    paused = request -> false;
  }

  /** Runs {@code action} as each pod PATCH arrives, before it is answered (time passing mid-bind). */
  public void onPodPatch(Runnable action) {
    onPodPatch = action;
  }

  /**
   * What another replica's bind does, in-process (so that it can run inside {@link #onPodPatch}):
   * writes {@code annotations} on the pod, then binds it to {@code node}.
   */
  public synchronized void bindAsAnotherReplica(String namespace, String pod, String node, Map<String, String> annotations) {
    var podPath = "/api/v1/namespaces/" + namespace + "/pods/" + pod;
    var patch = JSON.asJson(Map.of("metadata", Map.of("annotations", annotations)));
    crud.dispatch(request(HttpMethod.PATCH, podPath, patch, "application/merge-patch+json"));
    var binding = new io.fabric8.kubernetes.api.model.BindingBuilder().withNewMetadata().withName(pod).withNamespace(namespace).endMetadata()
        .withNewTarget().withKind("Node").withName(node).endTarget().build();
    var answer = bind(namespace, binding);
    if (answer.code() != 201) {
      throw new IllegalStateException("another replica's bind failed: " + answer.getBody().readUtf8());
    }
  }

  /** Sets a label on the pod, in-process (an update by someone else; it bumps the resourceVersion). */
  public void labelInProcess(String namespace, String pod, String key, String value) {
    var patch = JSON.asJson(Map.of("metadata", Map.of("labels", Map.of(key, value))));
    crud.dispatch(request(HttpMethod.PATCH, "/api/v1/namespaces/" + namespace + "/pods/" + pod, patch, "application/merge-patch+json"));
  }

  /** The requests of the clients that send this User-Agent (fabric8's Config.userAgent). */
  public static Predicate<RecordedRequest> from(String userAgent) {
    return request -> userAgent.equals(request.getHeader("User-Agent"));
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    if (paused.test(request)) {
      return status(503, "ServiceUnavailable", "paused").setBodyDelay(Duration.ofMinutes(10));
    }
    var path = request.getPath();
    var matcher = BINDINGS.matcher(path == null ? "" : path.split("\\?")[0]);
    if (!"POST".equals(request.getMethod()) || !matcher.matches()) {
      if ("PATCH".equals(request.getMethod()) && path != null && path.contains("/pods/")) {
        onPodPatch.run();
      }
      return crud.dispatch(request);
    }
    synchronized (this) {
      return bind(matcher.group(1), JSON.unmarshal(request.getUtf8Body(), Binding.class));
    }
  }

  private MockResponse bind(String namespace, Binding binding) {
    if (failNext != 0) {
      var code = failNext;
      failNext = 0;
      return status(code, "InternalError", "injected failure " + code);
    }
    var podPath = "/api/v1/namespaces/" + namespace + "/pods/" + binding.getMetadata().getName();
    var found = crud.dispatch(request(HttpMethod.GET, podPath, "", "application/json"));
    if (found.code() != 200) {
      return status(404, "NotFound", "pods \"" + binding.getMetadata().getName() + "\" not found");
    }
    var pod = JSON.unmarshal(found.getBody().readUtf8(), Pod.class);
    if (pod.getSpec().getNodeName() != null) {
      return status(409, "Conflict", "pod " + binding.getMetadata().getName() + " is already assigned to node \"" + pod.getSpec().getNodeName() + "\"");
    }
    var patch = JSON.asJson(Map.of("spec", Map.of("nodeName", binding.getTarget().getName())));
    crud.dispatch(request(HttpMethod.PATCH, podPath, patch, "application/merge-patch+json"));
    created.incrementAndGet();
    return new MockResponse().setResponseCode(201).setBody(JSON.asJson(binding));
  }

  private static RecordedRequest request(HttpMethod method, String path, String body, String contentType) {
    var headers = Headers.builder().add("Content-Type", contentType).build();
    return new RecordedRequest("HTTP/1.1", method, path, headers, new Buffer().writeUtf8(body));
  }

  private static MockResponse status(int code, String reason, String message) {
    var status = new StatusBuilder().withStatus("Failure").withCode(code).withReason(reason).withMessage(message).build();
    return new MockResponse().setResponseCode(code).setBody(JSON.asJson(status));
  }
}
