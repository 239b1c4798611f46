package io.gpuadmission.preemption;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.NodeEligibility;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyParser;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A pod nominated to a node holds its GPUs there for pods of no higher priority, as kube-scheduler holds node resources. */
class NominationsTest {
  private final GpuLedger ledger = new GpuLedger();
  private final PodFactsIndex pods = new PodFactsIndex(PolicyParser::builtInDefault, ledger);
  private final PlacementDecider decider = new PlacementDecider(ledger, PolicyParser::builtInDefault);

  @BeforeEach
  void aNodeWithOneFreeGpuAndAPodNominatedToIt() {
    ledger.putNode(new GpuNodeCapacity("a", "Tesla-T4", Collections.nCopies(2, 16L), Optional.empty()));
    ledger.confirm(GpuClaim.bound("old", "ml/old", "a", List.of(0), 12));
    pods.put(new PodFacts("high", "ml", "high", 1000, Instant.MAX, false, false, Optional.empty(), "", "a", Map.of(), GpuAsk.share(8)));
  }

  private String filter(long gib, int priority, String uid) {
    var result = decider.filter(GpuAsk.share(gib), NodeEligibility.ANY, List.of("a"), pods, priority, uid);
    return result.passed().isEmpty() ? result.failed().get("a") : "passed";
  }

  @Test
  void aLessImportantPodFindsTheNominatedPodsGpuMemoryTaken() {
    assertThat(filter(12, 100, "mid")).isEqualTo("largest free GPU has 8GiB of aliyun.com/gpu-mem, pod needs 12GiB");
    assertThat(filter(8, 100, "mid")).isEqualTo("passed");
    assertThat(filter(12, 1000, "peer")).isEqualTo("largest free GPU has 8GiB of aliyun.com/gpu-mem, pod needs 12GiB");
  }

  @Test
  void aMoreImportantPodAndTheNominatedPodItselfIgnoreTheHold() {
    assertThat(filter(12, 2000, "higher")).isEqualTo("passed");
    assertThat(filter(12, 1000, "high")).isEqualTo("passed");
  }

  @Test
  void theHoldGoesWhenThePodBindsOrHoldsGpusOfItsOwn() {
    ledger.reserve(GpuClaim.reserved("high", "ml/high", "a", List.of(1), 8));

    // Held once, by its reservation: 8 GiB left on GPU 1, not 0.
    assertThat(filter(8, 100, "mid")).isEqualTo("passed");
  }

  @Test
  void bindHoldsTheGpusAsFilterDoes() {
    assertThat(decider.choose(GpuAsk.share(12), NodeEligibility.ANY, "a", pods.heldOn("a", 100, "mid")))
        .isEqualTo(new PlacementDecider.Choice.Refused("node a: largest free GPU has 8GiB of aliyun.com/gpu-mem, pod needs 12GiB"));
    assertThat(decider.choose(GpuAsk.share(12), NodeEligibility.ANY, "a", pods.heldOn("a", 2000, "higher")))
        .isEqualTo(new PlacementDecider.Choice.Chosen(List.of(1)));
  }
}
