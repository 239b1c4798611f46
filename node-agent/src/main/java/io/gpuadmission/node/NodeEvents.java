package io.gpuadmission.node;

import io.gpuadmission.node.api.ApiServer;
import io.gpuadmission.node.api.Json;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * A core/v1 Event about one of the node's pods, from source gpu-admission, as {@code kubectl
 * describe} shows it: the same object as the server's {@code cluster.ClusterEvents} writes.
 */
final class NodeEvents {
  private NodeEvents() {}

  /** Creates the Event in the pod's namespace; throws what the API server answers. */
  static void publish(ApiServer api, Instant now, NodePod pod, String type, String reason, String message) {
    var at = DateTimeFormatter.ISO_INSTANT.format(now.truncatedTo(ChronoUnit.SECONDS));
    var event = Json.object();
    event.put("apiVersion", "v1").put("kind", "Event");
    event.putObject("metadata").put("generateName", pod.name() + ".").put("namespace", pod.namespace());
    event.putObject("involvedObject").put("apiVersion", "v1").put("kind", "Pod").put("namespace", pod.namespace())
        .put("name", pod.name()).put("uid", pod.uid());
    event.put("type", type).put("reason", reason).put("message", message.length() <= 1000 ? message : message.substring(0, 997) + "...");
    event.putObject("source").put("component", "gpu-admission");
    event.put("firstTimestamp", at).put("lastTimestamp", at).put("count", 1);
    api.create("/api/v1/namespaces/" + pod.namespace() + "/events", event);
  }
}
