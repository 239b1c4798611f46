package io.gpuadmission.preemption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.testing.LogCapture;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The leader's own preemption acts for pods of the cluster only. Warm-up posts sample filter
 * requests with no cluster behind them (no API client at all): their pods, refused everywhere,
 * must not start an attempt that fails with a WARN and a stack trace.
 */
class GpuPreemptorTest {
  private final GpuLedger ledger = new GpuLedger();
  private final PodFactsIndex pods = new PodFactsIndex(PolicyParser::builtInDefault, ledger);
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private GpuPreemptor preemptor;

  @AfterEach
  void close() {
    if (preemptor != null) {
      preemptor.close();
    }
  }

  @Test
  void aPodThePodInformerDoesNotKnowStartsNoPreemption() {
    // Node a: both GPUs hold a 12 GiB pod of priority 100; an 8 GiB pod of priority 1000 would evict one.
    ledger.putNode(new GpuNodeCapacity("a", "Tesla-T4", Collections.nCopies(2, 16L), Optional.empty()));
    for (var gpu = 0; gpu < 2; gpu++) {
      var name = "low-" + gpu;
      ledger.confirm(GpuClaim.bound(name, "ml/" + name, "a", List.of(gpu), 12));
      pods.put(new PodFacts(name, "ml", name, 100, Instant.parse("2026-01-01T00:00:00Z"), false, false,
          Optional.empty(), "a", "", Map.of(), GpuAsk.share(12)));
    }
    var decider = new PlacementDecider(ledger, PolicyParser::builtInDefault);
    // As in warm-up without a cluster: one replica leads alone, and there is no API client.
    preemptor = new GpuPreemptor(
        null, new PreemptionSearch(ledger, pods, decider, new DisruptionBudgets()), decider, ledger, pods, LeaderGate.alone("alone"),
        PolicyParser::builtInDefault, Clock.systemUTC(), new GpuPreemptor.Timing(Duration.ofMillis(50), Duration.ofSeconds(30)),
        new PreemptionMetrics(meters));

    try (var log = LogCapture.of(GpuPreemptor.class, true)) {
      preemptor.refused(sample(), List.of("a"));
      await().during(Duration.ofMillis(700)).atMost(Duration.ofSeconds(2)).until(() -> log.records().stream()
          .noneMatch(r -> r.getLevel().intValue() >= Level.WARNING.intValue()));
      assertThat(meters.find("gpu_admission_preemptions").counters()).isEmpty();
    }
  }

  /** Warm-up's share sample: a high-priority 8 GiB pod no informer has shown. */
  private static Pod sample() {
    return new PodBuilder().withNewMetadata().withName("warm-up-share").withNamespace("default").withUid("warm-up-share-uid").endMetadata()
        .withNewSpec().withPriority(1000).addNewContainer().withName("c")
        .withNewResources().addToLimits("aliyun.com/gpu-mem", new Quantity("8")).endResources().endContainer().endSpec().build();
  }
}
