package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.allocator.TaskDistribution;
import io.gpuadmission.policy.PolicyParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link NodeScorer} keeps its task and scorer from node to node; it must score every node exactly
 * as scoring each node afresh does (the per-node code it replaced, kept here as the oracle), over
 * shares and whole GPUs, DGX-1 links, mixed sizes, unhealthy GPUs and placement labels.
 */
class NodeScorerTest {
  @Test
  void scoresEveryNodeAsScoringItAfreshDoes() throws Exception {
    var policies =
        List.of(
            PlacementFixtures.dgx1Policy(),
            PolicyParser.builtInDefault(),
            PolicyParser.parse("sharedMemory:\n  placement: spread\n"),
            PolicyParser.parse("allocator:\n  memoryShare: fgd\n  wholeGpu: first-fit\n"),
            PolicyParser.parse(
                io.gpuadmission.support.Fixtures.text(io.gpuadmission.support.Fixtures.path("placement/policy-dgx1.yaml"))
                    .replace("allocator:\n", "allocator:\n  wholeGpu: first-fit\n  memoryShare: fgd\n")));
    for (var policy : policies) {
      var ledger = randomLedger();
      var strategies = new PlacementStrategies(policy, () -> TargetWorkload.given(TaskDistribution.of(List.of(Task.share(0, 4), Task.whole(0, 2)))));
      var nodes = new ArrayList<>(ledger.nodes());
      var asks = new ArrayList<GpuAsk>();
      for (long memory = 1; memory <= 17; memory += 2) {
        asks.add(GpuAsk.share(memory));
      }
      for (int count = 1; count <= 9; count++) {
        asks.add(GpuAsk.whole(count));
      }
      asks.add(GpuAsk.NONE.with(500, java.util.Set.of()));
      for (var ask : asks) {
        var scorer = new NodeScorer(strategies, ledger, ask);
        for (var name : nodes) {
          var view = ledger.view(name).orElseThrow();
          var expected = freshScore(strategies, ledger, ask, name, view);

          var actual = scorer.score(name, view);

          assertThat(Double.isNaN(actual) ? Optional.<Double>empty() : Optional.of(actual)).as(name + " " + ask).isEqualTo(expected);
        }
      }
    }
  }

  @Test
  void theTraceSimulatorsFixedWorkloadScoresTheSame() {
    var policy = PolicyParser.builtInDefault();
    var ledger = randomLedger();
    var workload = TargetWorkload.given(TaskDistribution.of(List.of(Task.share(0, 4), Task.share(0, 8))));
    var strategies = new PlacementStrategies(policy, () -> workload);
    var ask = GpuAsk.share(6);
    var scorer = new NodeScorer(strategies, ledger, ask);
    for (var name : ledger.nodes()) {
      var view = ledger.view(name).orElseThrow();
      var actual = scorer.score(name, view);
      assertThat(Double.isNaN(actual) ? Optional.<Double>empty() : Optional.of(actual)).isEqualTo(freshScore(strategies, ledger, ask, name, view));
    }
  }

  /** 60 nodes: 8-GPU V100s (DGX-1 links where the policy has them), 4-GPU labelled ones, mixed T4s. */
  private static GpuLedger randomLedger() {
    var random = new Random(8);
    var ledger = new GpuLedger();
    for (int n = 0; n < 60; n++) {
      var name = "node-" + n;
      var placement = n % 5 == 0 ? Optional.of("spread") : n % 5 == 1 ? Optional.of("binpack") : Optional.<String>empty();
      var memory = n % 3 == 0 ? List.of(8L, 16L, 16L, 8L) : n % 3 == 1 ? List.of(15L, 15L, 15L, 15L, 15L, 15L, 15L, 15L) : List.of(15L, 15L, 15L, 15L);
      var model = n % 3 == 0 ? "Tesla-T4" : "Tesla-V100-SXM2-16GB";
      ledger.putNode(new GpuNodeCapacity(name, model, memory, placement));
      for (int g = 0; g < memory.size(); g++) {
        var roll = random.nextInt(4);
        if (roll == 1) {
          ledger.confirm(GpuClaim.bound(name + "-" + g, "ns/" + name + "-" + g, name, List.of(g), 1 + random.nextInt((int) (long) memory.get(g))));
        } else if (roll == 2) {
          ledger.confirm(GpuClaim.bound(name + "-w" + g, "ns/" + name + "-w" + g, name, List.of(g), 0));
        }
      }
      if (n % 7 == 0) {
        ledger.setUnhealthy(name, java.util.Set.of(1));
      }
    }
    return ledger;
  }

  /** The per-node scoring NodeScorer replaced: a new task, scorer and whole-GPU choice per node. */
  private static Optional<Double> freshScore(PlacementStrategies s, GpuLedger ledger, GpuAsk ask, String name, NodeGpus view) {
    var scoring = s.shareScoring(ledger.capacity(name).flatMap(GpuNodeCapacity::placement));
    var task = ask.task();
    var score = scoring.scoreNode(view, task);
    if (score.isEmpty()) {
      return Optional.empty();
    }
    if (ask.kind() != GpuAsk.Kind.WHOLE) {
      return Optional.of(score.getAsDouble());
    }
    return s.whole(ask).choose(s.withLinks(view), ask.count()).map(choice -> s.topologyLoss(ask, s.withLinks(view), choice.setScore()) * 1e6 + score.getAsDouble());
  }
}
