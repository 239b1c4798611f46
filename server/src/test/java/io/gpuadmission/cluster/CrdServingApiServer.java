package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A CRUD mock API server that serves one custom resource only while its CRD is installed, as
 * kube-apiserver does: without it, discovery of the group version and every request for the
 * resource (LIST, WATCH, GET) answer 404, a LIST included and for ever, where the fabric8 mock
 * would answer an empty list. {@link #install} and {@link #uninstall} play {@code kubectl apply}
 * and {@code kubectl delete} of the CRD.
 */
final class CrdServingApiServer extends Dispatcher {
  private static final String NOT_FOUND =
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the server could not find the requested resource\",\"reason\":\"NotFound\",\"details\":{},\"code\":404}";

  private final KubernetesMixedDispatcher crud;
  private final String groupVersion;
  private final List<String> refused = new CopyOnWriteArrayList<>();
  private volatile boolean installed;

  private CrdServingApiServer(KubernetesMixedDispatcher crud, String groupVersion) {
    this.crud = crud;
    this.groupVersion = "/apis/" + groupVersion;
  }

  /** A started server for the resources of {@code groupVersion} ({@code scheduling.sigs.k8s.io/v1beta1}), none installed yet. */
  static KubernetesMockServer start(String groupVersion, List<CrdServingApiServer> handle) {
    var responses = new HashMap<io.fabric8.mockwebserver.ServerRequest, java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    var dispatcher = new CrdServingApiServer(new KubernetesMixedDispatcher(responses), groupVersion);
    var server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
    server.init();
    handle.add(dispatcher);
    return server;
  }

  /** From now on the group version is served (the CRD object itself the caller creates, as kubectl would). */
  void install() {
    installed = true;
  }

  /** From now on the group version answers 404, as once its CRD is deleted. */
  void uninstall() {
    installed = false;
  }

  /** The paths answered 404 so far, in order. */
  List<String> refused() {
    return List.copyOf(refused);
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    var path = request.getPath();
    var bare = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
    if (!installed && (bare.equals(groupVersion) || bare.startsWith(groupVersion + "/"))) {
      refused.add(request.getMethod() + " " + path);
      return new MockResponse().setResponseCode(404).setHeader("Content-Type", "application/json").setBody(NOT_FOUND);
    }
    return crud.dispatch(request);
  }
}
