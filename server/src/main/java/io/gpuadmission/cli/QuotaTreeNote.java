package io.gpuadmission.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.cluster.QuotaTreeReading;
import io.gpuadmission.cluster.QuotaTreeWatcher;
import io.gpuadmission.quota.QuotaNode;
import io.gpuadmission.quota.QuotaTreeCheck;
import java.util.stream.Collectors;

/**
 * What {@code explain} says of an ElasticQuotaTree beside /validate's answer: each quota node with
 * its namespaces, min and max, as the service will enforce them (usage is the cluster's: {@code
 * /extender/inspect}).
 */
final class QuotaTreeNote {
  private QuotaTreeNote() {}

  static String of(JsonNode object, String namespace) {
    if (!QuotaTreeWatcher.NAMESPACE.equals(namespace)) {
      return "not the cluster's quota tree: gpu-admission reads the ElasticQuotaTree in " + QuotaTreeWatcher.NAMESPACE;
    }
    if (!(QuotaTreeReading.check(object) instanceof QuotaTreeCheck.Valid valid)) {
      return "";
    }
    return valid.tree().nodes().stream().map(QuotaTreeNote::line).collect(Collectors.joining("; ", "quota nodes: ", ""));
  }

  private static String line(QuotaNode node) {
    var namespaces = node.namespaces().isEmpty() ? "" : " (" + String.join(", ", node.namespaces()) + ")";
    return node.name() + namespaces + " min " + node.min() + ", max " + node.max();
  }
}
