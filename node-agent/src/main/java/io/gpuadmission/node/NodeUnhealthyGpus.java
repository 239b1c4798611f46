package io.gpuadmission.node;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.contract.UnhealthyGpus;
import io.gpuadmission.node.api.ApiServer;
import io.gpuadmission.node.api.ListWatch;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One node's unhealthy-GPU ConfigMap ({@code kube-system/unhealthy-gpu-<node>}, key {@code gpus}),
 * for that node's agent: one list and watch with a {@code metadata.name} field selector. Tells
 * {@code changed} the GPUs it names on every change (none once it is deleted or absent).
 */
public final class NodeUnhealthyGpus implements AutoCloseable {
  static final String NAMESPACE = UnhealthyGpus.NAMESPACE;

  private final ListWatch watch;

  private NodeUnhealthyGpus(ListWatch watch) {
    this.watch = watch;
  }

  static NodeUnhealthyGpus start(ApiServer api, String node, Duration backoff, Consumer<Set<Integer>> changed) {
    var name = UnhealthyGpus.configMapName(node);
    var handler = new ListWatch.Handler() {
      @Override
      public void listed(List<JsonNode> items) {
        changed.accept(items.stream().filter(this::ours).findFirst().map(NodeUnhealthyGpus::gpus).orElse(Set.of()));
      }

      @Override
      public void added(JsonNode map) {
        if (ours(map)) {
          changed.accept(gpus(map));
        }
      }

      @Override
      public void modified(JsonNode map) {
        added(map);
      }

      @Override
      public void deleted(JsonNode map) {
        if (ours(map)) {
          changed.accept(Set.of());
        }
      }

      private boolean ours(JsonNode map) {
        return name.equals(map.path("metadata").path("name").asText());
      }
    };
    var watch = new ListWatch(api, "/api/v1/namespaces/" + NAMESPACE + "/configmaps", "fieldSelector=" + ApiServer.encode("metadata.name=" + name),
        "ConfigMap " + NAMESPACE + "/" + name, handler, backoff);
    return new NodeUnhealthyGpus(watch.start());
  }

  private static Set<Integer> gpus(JsonNode map) {
    return UnhealthyGpus.gpus(map.path("data").path(UnhealthyGpus.KEY).asText(null));
  }

  @Override
  public void close() {
    watch.close();
  }
}
