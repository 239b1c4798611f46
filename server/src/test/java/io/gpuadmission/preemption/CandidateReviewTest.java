package io.gpuadmission.preemption;

import static org.assertj.core.api.Assertions.assertThat;

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
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The preempt verb's answer to kube-scheduler's candidates. */
class CandidateReviewTest {
  private final GpuLedger ledger = new GpuLedger();
  private final PodFactsIndex pods = new PodFactsIndex(PolicyParser::builtInDefault, ledger);
  private CandidateReview review;

  @BeforeEach
  void nodeAWithTwoFullGpus() {
    ledger.putNode(new GpuNodeCapacity("a", "Tesla-T4", Collections.nCopies(2, 16L), Optional.empty()));
    ledger.putNode(new GpuNodeCapacity("b", "Tesla-T4", Collections.nCopies(2, 16L), Optional.empty()));
    share("x", "a", 0, 12, 100, 1);
    share("small", "a", 0, 4, 100, 30);
    share("y", "a", 1, 12, 100, 2);
    share("keep-0", "b", 0, 12, 5000, 0);
    share("low-b", "b", 0, 4, 100, 3);
    share("keep-1", "b", 1, 12, 5000, 0);
    var decider = new PlacementDecider(ledger, PolicyParser::builtInDefault);
    var search = new PreemptionSearch(ledger, pods, decider, new DisruptionBudgets());
    // A replica that does not lead: the review answers, nothing is preempted by it.
    var preemptor =
        new GpuPreemptor(
            null, search, decider, ledger, pods, new LeaderGate("follower"), PolicyParser::builtInDefault, Clock.systemUTC(),
            new GpuPreemptor.Timing(Duration.ofSeconds(1), Duration.ofSeconds(30)), new PreemptionMetrics(new SimpleMeterRegistry()));
    review = new CandidateReview(search, preemptor, PolicyParser::builtInDefault);
  }

  private void share(String name, String node, int gpu, long gib, int priority, int minute) {
    ledger.confirm(GpuClaim.bound(name, "ml/" + name, node, List.of(gpu), gib));
    pods.put(new PodFacts(name, "ml", name, priority, Instant.parse("2026-01-01T00:00:00Z").plusSeconds(60L * minute), false, false,
        Optional.empty(), node, "", Map.of(), GpuAsk.share(gib)));
  }

  private static Pod high(String preemptionPolicy) {
    return new PodBuilder().withNewMetadata().withName("high").withNamespace("ml").withUid("high").endMetadata()
        .withNewSpec().withPriority(1000).withPreemptionPolicy(preemptionPolicy).addNewContainer().withName("c")
        .withNewResources().addToLimits("aliyun.com/gpu-mem", new Quantity("8")).endResources().endContainer().endSpec().build();
  }

  private static Map<String, CandidateReview.Candidate> proposed() {
    var proposed = new LinkedHashMap<String, CandidateReview.Candidate>();
    proposed.put("a", new CandidateReview.Candidate(List.of("small", "cpu-only"), 1));
    proposed.put("b", new CandidateReview.Candidate(List.of("low-b"), 0));
    return proposed;
  }

  @Test
  void keepsKubeSchedulersVictimsAddsTheOnesThatFreeAGpuAndDropsNodesWithout() {
    var answer = review.review(high("PreemptLowerPriority"), proposed());

    // On a: small and a pod without GPUs were kube-scheduler's; y (the younger 12 GiB pod) frees GPU 1.
    // On b, low-b frees node memory, and every other pod has a higher priority: no GPU can be freed.
    assertThat(answer).containsExactly(Map.entry("a", new CandidateReview.Candidate(List.of("small", "cpu-only", "y"), 1)));
  }

  @Test
  void aPodWithPreemptionPolicyNeverGetsNoCandidates() {
    assertThat(review.review(high("Never"), proposed())).isEmpty();
  }

  @Test
  void aPodWithoutGpusKeepsKubeSchedulersCandidates() {
    var cpu = new PodBuilder().withNewMetadata().withName("cpu").withNamespace("ml").withUid("cpu").endMetadata()
        .withNewSpec().withPriority(1000).addNewContainer().withName("c").endContainer().endSpec().build();

    assertThat(review.review(cpu, proposed())).isEqualTo(proposed());
    // Never a node without victims: kube-scheduler would refuse the whole answer.
    var withEmpty = new LinkedHashMap<>(proposed());
    withEmpty.put("c", new CandidateReview.Candidate(List.of(), 0));
    assertThat(review.review(cpu, withEmpty)).isEqualTo(proposed());
  }
}
