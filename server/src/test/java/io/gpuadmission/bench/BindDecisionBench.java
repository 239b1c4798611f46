package io.gpuadmission.bench;

import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyParser;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Bind's own work, without the API server: the re-check and GPU choice on the chosen node, the
 * ledger reservation, the annotations, and the assumption (then an unreserve, so the ledger stays
 * the same size), on a ledger of NODES nodes holding GPU_PODS shares. Prints percentiles.
 *
 * <p>Usage: {@code BindDecisionBench NODES GPU_PODS ROUNDS}
 */
public final class BindDecisionBench {
  private BindDecisionBench() {}

  public static void main(String[] args) {
    var nodes = Integer.parseInt(args[0]);
    var gpuPods = Integer.parseInt(args[1]);
    var rounds = Integer.parseInt(args[2]);
    var policy = PolicyParser.builtInDefault();
    var ledger = ledger(nodes, gpuPods);
    var decider = new PlacementDecider(ledger, () -> policy);
    var ask = GpuAsk.share(4);
    var nanos = new long[rounds];
    long sink = 0;
    for (int r = -rounds; r < rounds; r++) {
      var start = System.nanoTime();
      var node = name(Math.floorMod(r * 7919, nodes));
      var choice = (PlacementDecider.Choice.Chosen) decider.choose(ask, node);
      var uid = "new-" + r;
      if (!ledger.reserve(GpuClaim.reserved(uid, "bench/" + uid, node, choice.gpus(), 4))) {
        throw new IllegalStateException("no room on " + node);
      }
      sink += GpuAnnotations.share(choice.gpus().get(0), 4, 15, Instant.now()).size();
      ledger.assume(uid, Instant.now().plusSeconds(30));
      ledger.unreserve(uid);
      if (r >= 0) {
        nanos[r] = System.nanoTime() - start;
      }
    }
    Arrays.sort(nanos);
    System.out.printf(
        "nodes=%d gpuPods=%d rounds=%d p50_us=%.1f p99_us=%.1f p99.9_us=%.1f max_us=%.1f (sink %d)%n",
        nodes, gpuPods, rounds, nanos[rounds / 2] / 1e3, nanos[(int) (rounds * 0.99)] / 1e3,
        nanos[(int) (rounds * 0.999)] / 1e3, nanos[rounds - 1] / 1e3, sink);
  }

  /** NODES nodes of 8 V100s (15 GiB each), GPU_PODS bound 4 GiB shares spread over them. */
  static GpuLedger ledger(int nodes, int gpuPods) {
    var ledger = new GpuLedger();
    for (int n = 0; n < nodes; n++) {
      ledger.putNode(new GpuNodeCapacity(name(n), "Tesla-V100-SXM2-16GB", Collections.nCopies(8, 15L), Optional.empty()));
    }
    for (int p = 0; p < gpuPods; p++) {
      ledger.confirm(GpuClaim.bound("uid-" + p, "bench/share-" + p, name(p % nodes), List.of(p / nodes % 8), 4));
    }
    return ledger;
  }

  static String name(int n) {
    return String.format("gpu-node-%05d", n);
  }
}
