package io.gpuadmission.extender;

import io.gpuadmission.placement.PlacementDecider.FilterResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The filter answer for a pod its team quota refuses: every node, with the quota's reason. */
final class QuotaRefusals {
  private QuotaRefusals() {}

  static FilterResult everyNode(List<String> nodes, String reason) {
    var refused = new LinkedHashMap<String, String>();
    nodes.forEach(node -> refused.put(node, reason));
    return new FilterResult(List.of(), Map.of(), refused);
  }
}
