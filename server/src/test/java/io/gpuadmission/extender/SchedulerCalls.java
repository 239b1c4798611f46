package io.gpuadmission.extender;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.SchedulerCaller;
import io.restassured.http.ContentType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.util.List;
import java.util.Map;

/** kube-scheduler's extender calls as it sends them, over HTTPS with its client certificate. */
final class SchedulerCalls {
  private SchedulerCalls() {}

  /** ExtenderArgs (nodeCacheCapable): the pod as the API server has it, the nodes its own filters passed. */
  static String args(Pod pod, List<String> nodes) {
    var json = KubernetesJson.mapper().createObjectNode();
    json.set("Pod", KubernetesJson.mapper().valueToTree(pod));
    var names = json.putArray("NodeNames");
    nodes.forEach(names::add);
    return json.toString();
  }

  /** ExtenderBindingArgs for the pod on {@code node}. */
  static String bind(Pod pod, String node) {
    var meta = pod.getMetadata();
    return KubernetesJson.mapper()
        .valueToTree(Map.of("PodName", meta.getName(), "PodNamespace", meta.getNamespace(), "PodUID", meta.getUid(), "Node", node))
        .toString();
  }

  /** Posts {@code body} to {@code path}; the answer, which must be a 200. */
  static String post(URL base, String path, String body) {
    return SchedulerCaller.given().baseUri(base.toString()).contentType(ContentType.JSON).body(body).post(path)
        .then().statusCode(200).extract().asString();
  }

  /** GETs {@code path} as kube-scheduler's client; the answer, which must be a 200. */
  static String get(URL base, String path) {
    return SchedulerCaller.given().baseUri(base.toString()).get(path).then().statusCode(200).extract().asString();
  }

  static JsonNode json(String text) {
    try {
      return KubernetesJson.mapper().readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
