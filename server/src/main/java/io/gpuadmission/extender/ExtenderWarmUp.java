package io.gpuadmission.extender;

import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyStore;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Optional;

/**
 * The extender's part of warm-up: filter, prioritize and bind's decision, decoded from sample
 * requests and answered as the endpoints answer, against a ledger of eight sample nodes of its own
 * (the real ledger is never touched, and bind asks no API server). Warm-up also posts the filter
 * and prioritize samples to the real endpoints over HTTPS, where the nodes are unknown.
 */
@ApplicationScoped
public class ExtenderWarmUp {
  /** Extender arguments (nodeCacheCapable form) of a GPU-memory share pod and a 2-GPU pod. */
  public static final List<String> ARGS_SAMPLES = List.of("/warmup/extender-share.json", "/warmup/extender-whole.json");

  public static final String BIND_SAMPLE = "/warmup/extender-bind.json";
  private static final int SAMPLE_NODES = 8;

  private final PolicyStore policies;
  private final PlacementDecider decider;

  public ExtenderWarmUp(PolicyStore policies) {
    this.policies = policies;
    var ledger = new GpuLedger();
    // Names as in the samples; half topology-labelled 8-GPU boards, half shared-memory nodes.
    for (int i = 0; i < SAMPLE_NODES; i++) {
      var placement = i % 2 == 0 ? Optional.<String>empty() : Optional.of("cgpu");
      ledger.putNode(new GpuNodeCapacity("warm-up-gpu-" + i, "Tesla-V100-SXM2-16GB", List.of(16L, 16L, 16L, 16L, 16L, 16L, 16L, 16L), placement));
    }
    this.decider = new PlacementDecider(ledger, policies::current);
  }

  /**
   * One round: each sample through filter and prioritize, then bind's decision for the first
   * sample's pod (the bind sample names it), each encoded as the endpoint would. Returns the bytes
   * written, so that nothing is optimized away.
   */
  public int round(List<byte[]> argsSamples, byte[] bindSample) {
    var written = 0;
    GpuAsk bound = null;
    for (var sample : argsSamples) {
      var args = ExtenderCodec.args(sample);
      var names = ExtenderCodec.names(args);
      var ask = GpuAsk.of(args.pod(), policies.current());
      bound = bound == null ? ask : bound;
      var filtered = decider.filter(ask, names);
      written += ExtenderCodec.filterAnswer(new ExtenderWire.FilterResult(null, filtered.passed(), filtered.failed(), filtered.unresolvable(), "")).length;
      written += ExtenderCodec.prioritizeAnswer(decider.prioritize(ask, names)).length;
    }
    var bind = ExtenderCodec.bindingArgs(bindSample);
    var choice = decider.choose(bound == null ? GpuAsk.NONE : bound, bind.node());
    var error = choice instanceof PlacementDecider.Choice.Refused r ? r.reason() : "";
    return written + ExtenderCodec.write(new ExtenderWire.BindingResult(error)).length;
  }
}
