package io.gpuadmission.extender;

import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.NodeListBuilder;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyStore;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.HashSet;
import java.util.List;

/** Turns extender arguments into decisions and decisions into the answer's form. */
@ApplicationScoped
public class ExtenderService {
  private final PlacementDecider decider;
  private final PolicyStore policies;

  public ExtenderService(PlacementDecider decider, PolicyStore policies) {
    this.decider = decider;
    this.policies = policies;
  }

  ExtenderWire.FilterResult filter(ExtenderWire.Args args) {
    var ask = GpuAsk.of(args.pod(), policies.current());
    var result = decider.filter(ask, ExtenderCodec.names(args));
    if (args.nodeNames() != null) {
      return new ExtenderWire.FilterResult(null, result.passed(), result.failed(), result.unresolvable(), "");
    }
    return new ExtenderWire.FilterResult(passedNodes(args.nodes(), result.passed()), null, result.failed(), result.unresolvable(), "");
  }

  List<PlacementDecider.NodeScore> prioritize(ExtenderWire.Args args) {
    var ask = GpuAsk.of(args.pod(), policies.current());
    return decider.prioritize(ask, ExtenderCodec.names(args));
  }

  /** The Node objects that passed, in the order sent (nodeCacheCapable: false). */
  private static NodeList passedNodes(NodeList sent, List<String> passed) {
    var keep = new HashSet<>(passed);
    return new NodeListBuilder()
        .withItems(sent.getItems().stream().filter(n -> keep.contains(n.getMetadata().getName())).toList())
        .build();
  }
}
