package io.gpuadmission.preemption;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.placement.GpuAsk;
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
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Which pods preemption evicts on a node, read from the ledger and the pods' facts. */
class PreemptionSearchTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final GpuLedger ledger = new GpuLedger();
  private final PodFactsIndex pods = new PodFactsIndex(PolicyParser::builtInDefault, ledger);
  private final DisruptionBudgets budgets = new DisruptionBudgets();
  private PreemptionSearch search;

  @BeforeEach
  void twoNodesOfTwo16GiBGpus() {
    for (var node : List.of("a", "b")) {
      ledger.putNode(new GpuNodeCapacity(node, "Tesla-V100-SXM2-16GB", Collections.nCopies(2, 16L), Optional.empty()));
    }
    search = new PreemptionSearch(ledger, pods, new PlacementDecider(ledger, PolicyParser::builtInDefault), budgets);
  }

  /** A running share pod of {@code gib} GiB on {@code node} GPU {@code gpu}, started {@code minute} minutes after T0. */
  private void share(String name, String node, int gpu, long gib, int priority, int minute) {
    share(name, node, gpu, gib, priority, minute, Map.of());
  }

  private void share(String name, String node, int gpu, long gib, int priority, int minute, Map<String, String> labels) {
    ledger.confirm(GpuClaim.bound(name, "ml/" + name, node, List.of(gpu), gib));
    pods.put(new PodFacts(name, "ml", name, priority, T0.plusSeconds(60L * minute), false, false, Optional.empty(), node, "", labels, GpuAsk.share(gib)));
  }

  /** A budget in namespace ml over pods labelled app={@code app}, allowing {@code allowed} disruptions now. */
  private void budget(String app, int allowed) {
    budgets.current(new io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder()
        .withNewMetadata().withName(app).withNamespace("ml").endMetadata()
        .withNewSpec().withNewSelector().addToMatchLabels("app", app).endSelector().endSpec()
        .withNewStatus().withDisruptionsAllowed(allowed).endStatus().build());
  }

  private void whole(String name, String node, List<Integer> gpus, int priority, int minute, String gang) {
    ledger.confirm(GpuClaim.bound(name, "ml/" + name, node, gpus, 0));
    pods.put(facts(name, node, priority, minute, Optional.ofNullable(gang)));
  }

  private static PodFacts facts(String name, String node, int priority, int minute, Optional<String> gang) {
    return new PodFacts(name, "ml", name, priority, T0.plusSeconds(60L * minute), false, false, gang, node, "", Map.of(), GpuAsk.share(1));
  }

  private static PreemptionSearch.Preemptor high(long gib) {
    return new PreemptionSearch.Preemptor("high", "ml/high", 1000, GpuAsk.share(gib));
  }

  private static List<String> names(Optional<NodeVictims> victims) {
    return victims.orElseThrow().victims().stream().map(Victim::uid).toList();
  }

  @Test
  void freesOneGpuWithTheFewestPods() {
    // GPU 0: one 12 GiB pod; GPU 1: three 4 GiB pods. Freeing GPU 1 for 12 GiB takes two of them.
    share("big", "a", 0, 12, 0, 1);
    share("s1", "a", 1, 4, 0, 2);
    share("s2", "a", 1, 4, 0, 3);
    share("s3", "a", 1, 4, 0, 4);

    var chosen = search.onNode(high(12), "a", Set.of());

    assertThat(names(chosen)).containsExactly("big");
    assertThat(chosen.orElseThrow().gpus()).containsExactly(0);
  }

  @Test
  void keepsTheOldestPodsOfAGpuAndEvictsTheYoungest() {
    // As kube-scheduler reprieves: the earlier a pod started, the more important it is.
    share("s1", "a", 1, 4, 0, 2);
    share("s2", "a", 1, 4, 0, 3);
    share("s3", "a", 1, 4, 0, 4);
    share("s4", "a", 1, 4, 0, 5);
    share("full", "a", 0, 16, 500, 0);

    // In kube-scheduler's order: the more important victim first.
    assertThat(names(search.onNode(high(8), "a", Set.of()))).containsExactly("s3", "s4");
  }

  @Test
  void lowerPriorityVictimsGoBeforeFewerOfHigherPriority() {
    share("important", "a", 0, 12, 500, 1);
    share("cheap1", "a", 1, 8, 0, 2);
    share("cheap2", "a", 1, 8, 0, 3);

    assertThat(names(search.onNode(high(12), "a", Set.of()))).containsExactly("cheap1", "cheap2");
  }

  @Test
  void neverEvictsPodsOfEqualOrHigherPriority() {
    share("equal", "a", 0, 12, 1000, 1);
    share("higher", "a", 1, 12, 2000, 2);

    assertThat(search.onNode(high(8), "a", Set.of())).isEmpty();
  }

  @Test
  void refusesANodeWhereKubeSchedulerNamedAPodOfEqualPriority() {
    share("equal", "a", 0, 12, 1000, 1);
    share("low", "a", 1, 12, 0, 2);

    assertThat(search.onNode(high(8), "a", Set.of("equal"))).isEmpty();
  }

  @Test
  void evictsOnlyTheLowerPriorityPodsOfAGpuTheyShareWithHigherOnes() {
    share("equal", "a", 0, 8, 1000, 1);
    share("low", "a", 0, 8, 0, 2);
    share("higher", "a", 1, 12, 2000, 3);

    var chosen = search.onNode(high(8), "a", Set.of());

    assertThat(names(chosen)).containsExactly("low");
    assertThat(chosen.orElseThrow().gpus()).containsExactly(0);
  }

  @Test
  void aGangOnTheNodeGoesWholeOrNotAtAll() {
    whole("bert-0", "a", List.of(0), 0, 1, "ml/bert");
    whole("bert-1", "a", List.of(1), 0, 1, "ml/bert");

    assertThat(names(search.onNode(high(8), "a", Set.of()))).containsExactlyInAnyOrder("bert-0", "bert-1");
  }

  @Test
  void aGangWithAMemberOnAnotherNodeIsNeverAVictim() {
    whole("gpt-0", "a", List.of(0), 0, 1, "ml/gpt");
    whole("gpt-1", "b", List.of(0), 0, 1, "ml/gpt");
    whole("other", "a", List.of(1), 2000, 1, null);

    assertThat(search.onNode(high(8), "a", Set.of())).isEmpty();
  }

  @Test
  void aGangWithAMemberOfEqualPriorityIsNeverAVictim() {
    whole("bert-0", "a", List.of(0), 0, 1, "ml/bert");
    whole("bert-1", "a", List.of(1), 1000, 1, "ml/bert");

    assertThat(search.onNode(high(8), "a", Set.of())).isEmpty();
  }

  @Test
  void aGangMemberKubeSchedulerChoseBringsTheRestOfItsGang() {
    whole("bert-0", "a", List.of(0), 0, 1, "ml/bert");
    whole("bert-1", "a", List.of(1), 0, 1, "ml/bert");

    var chosen = search.onNode(high(8), "a", Set.of("bert-0"));

    assertThat(names(chosen)).containsExactly("bert-1");
  }

  @Test
  void aGangMemberKubeSchedulerChoseWhoseGangCannotGoDropsTheNode() {
    whole("gpt-0", "a", List.of(0), 0, 1, "ml/gpt");
    whole("gpt-1", "b", List.of(0), 0, 1, "ml/gpt");
    share("low", "a", 1, 12, 0, 1);

    assertThat(search.onNode(high(8), "a", Set.of("gpt-0"))).isEmpty();
  }

  @Test
  void whatKubeSchedulerEvictsAnywayCountsAsFree() {
    share("x", "a", 0, 12, 0, 1);
    share("y", "a", 1, 12, 0, 2);

    var chosen = search.onNode(high(8), "a", Set.of("x"));

    assertThat(chosen.orElseThrow().victims()).isEmpty();
  }

  @Test
  void aWholeGpuAskEvictsEverythingOnOneGpu() {
    share("s1", "a", 0, 4, 0, 1);
    share("s2", "a", 0, 4, 0, 2);
    share("s3", "a", 1, 12, 0, 3);

    var chosen = search.onNode(new PreemptionSearch.Preemptor("high", "ml/high", 1000, GpuAsk.whole(1)), "a", Set.of());

    assertThat(names(chosen)).containsExactly("s3");
  }

  @Test
  void severalWholeGpusAreFreedTogetherOnTheNode() {
    share("s1", "a", 0, 4, 0, 1);
    share("s2", "a", 1, 4, 0, 2);

    var chosen = search.onNode(new PreemptionSearch.Preemptor("high", "ml/high", 1000, GpuAsk.whole(2)), "a", Set.of());

    assertThat(names(chosen)).containsExactlyInAnyOrder("s1", "s2");
    assertThat(chosen.orElseThrow().gpus()).containsExactly(0, 1);
  }

  @Test
  void aGpuTooSmallOrUnhealthyIsNeverFreed() {
    share("s1", "a", 0, 12, 0, 1);
    share("s2", "a", 1, 12, 0, 2);
    ledger.setUnhealthy("a", Set.of(1));

    assertThat(names(search.onNode(high(16), "a", Set.of()))).containsExactly("s1");
    assertThat(search.onNode(high(17), "a", Set.of())).isEmpty();
  }

  @Test
  void prefersVictimsNoDisruptionBudgetProtects() {
    share("web", "a", 0, 12, 0, 9, Map.of("app", "web"));
    share("batch", "a", 1, 12, 0, 1, Map.of("app", "batch"));
    assertThat(names(search.onNode(high(8), "a", Set.of()))).containsExactly("web"); // the younger

    budget("web", 0);

    var chosen = search.onNode(high(8), "a", Set.of());
    assertThat(names(chosen)).containsExactly("batch");
    assertThat(chosen.orElseThrow().pdbViolations()).isZero();
  }

  @Test
  void aDisruptionBudgetIsAPreferenceNotAVeto() {
    share("web", "a", 0, 12, 0, 9, Map.of("app", "web"));
    share("higher", "a", 1, 12, 2000, 1);
    budget("web", 0);

    var chosen = search.onNode(high(8), "a", Set.of());

    assertThat(names(chosen)).containsExactly("web");
    assertThat(chosen.orElseThrow().pdbViolations()).isEqualTo(1);
  }

  @Test
  void podsABudgetProtectsArePutBackFirstAndBudgetsCountEveryPodTheySelect() {
    share("a1", "a", 0, 4, 0, 1);
    share("a2", "a", 0, 4, 0, 2);
    share("web-1", "a", 0, 4, 0, 3, Map.of("app", "web"));
    share("web-2", "a", 0, 4, 0, 4, Map.of("app", "web"));
    share("full", "a", 1, 16, 2000, 0);
    // One disruption allowed: of web-1 and web-2 (in that order of importance) only web-2 violates.
    budget("web", 1);

    var chosen = search.onNode(high(8), "a", Set.of());

    assertThat(names(chosen)).containsExactly("a2", "web-1");
    assertThat(chosen.orElseThrow().pdbViolations()).isZero();
  }

  @Test
  void aGpuATerminatingPodFreesIsRoomLessWhatThePodNominatedThereTakes() {
    // going (12 GiB on GPU 0) terminates for "first", nominated to a; stays holds GPU 1.
    share("going", "a", 0, 12, 0, 9);
    share("stays", "a", 1, 12, 0, 1);
    pods.put(new PodFacts("going", "ml", "going", 0, T0, true, true, Optional.empty(), "a", "", Map.of(), GpuAsk.share(12)));
    pods.put(new PodFacts("first", "ml", "first", 1000, Instant.MAX, false, false, Optional.empty(), "", "a", Map.of(), GpuAsk.share(8)));

    // first takes 8 of GPU 0's 16 GiB once going is gone: 8 GiB fit beside it, no eviction.
    var chosen = search.onNode(high(8), "a", Set.of()).orElseThrow();
    assertThat(chosen.victims()).extracting(Victim::uid).containsExactly("going");
    assertThat(chosen.evicted()).isEmpty();
    assertThat(chosen.gpus()).containsExactly(0);
    // 12 GiB do not fit beside it: stays goes, GPU 1.
    var larger = search.onNode(high(12), "a", Set.of()).orElseThrow();
    assertThat(larger.victims()).extracting(Victim::uid).containsExactly("stays");
    assertThat(larger.gpus()).containsExactly(1);
  }

  @Test
  void aGpuATerminatingPodFreesRanksBeforeOneThatNeedsAnEviction() {
    // The terminating pod started last-but-one, the running one last: kube-scheduler's ranking
    // alone would evict the younger one; the terminating one costs nothing.
    share("going", "a", 0, 12, 0, 1);
    share("young", "a", 1, 12, 0, 9);
    pods.put(new PodFacts("going", "ml", "going", 0, T0.plusSeconds(60), true, true, Optional.empty(), "a", "", Map.of(), GpuAsk.share(12)));

    assertThat(names(search.onNode(high(8), "a", Set.of()))).containsExactly("going");
  }

  @Test
  void aPodNominatedToTheNodeKeepsTheGpuItWouldTake() {
    share("low", "a", 1, 12, 0, 1);
    // GPU 0 is empty: enough for the preemptor, unless a pod of no lower priority is nominated here.
    assertThat(search.onNode(high(8), "a", Set.of()).orElseThrow().victims()).isEmpty();

    pods.put(new PodFacts("first", "ml", "first", 1000, Instant.MAX, false, false, Optional.empty(), "", "a", Map.of(), GpuAsk.share(12)));

    assertThat(names(search.onNode(high(8), "a", Set.of()))).containsExactly("low");
  }

  @Test
  void nodesAreRankedAsKubeSchedulerRanksThem() {
    // Same priority and count on both nodes: the one whose victim started last is evicted.
    share("old", "a", 0, 12, 0, 1);
    share("young", "b", 0, 12, 0, 9);
    share("keep-a", "a", 1, 12, 2000, 0);
    share("keep-b", "b", 1, 12, 2000, 0);
    var a = search.onNode(high(8), "a", Set.of()).orElseThrow();
    var b = search.onNode(high(8), "b", Set.of()).orElseThrow();

    assertThat(List.of(a, b).stream().sorted(NodeVictims.BETTER_FIRST).map(NodeVictims::node)).containsExactly("b", "a");
  }
}
