package io.gpuadmission.quota;

import static io.gpuadmission.quota.QuotaTreeTest.gpu;
import static io.gpuadmission.quota.QuotaTreeTest.leaf;
import static io.gpuadmission.quota.QuotaTreeTest.root;
import static io.gpuadmission.quota.QuotaTreeTest.tree;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PreemptionUnderQuotaTest {
  // 12 GPUs: team-a guaranteed 4 and may borrow up to 8; team-b guaranteed 8, up to 12.
  private final QuotaTree tree = tree(root(12, leaf("team-a", 4, 8, "a"), leaf("team-b", 8, 12, "b")));

  private QuotaBook book(long a, long b) {
    return QuotaBook.of(tree, List.of(QuotaPod.of("pods-a", "a", gpu(a), 0, 0), QuotaPod.of("pods-b", "b", gpu(b), 0, 0)));
  }

  private static QuotaPod pod(String namespace, long gpus) {
    return QuotaPod.of(namespace + "-victim", namespace, gpu(gpus), 0, 0);
  }

  @Test
  void aTeamWithinItsMinTakesFromABorrowerThatKeepsItsMin() {
    assertThat(PreemptionUnderQuota.refusal(book(6, 4), "b", gpu(1), List.of(pod("a", 2)))).isEmpty();
  }

  @Test
  void aTeamWithinItsMinNeverTakesABorrowerBelowItsMin() {
    assertThat(PreemptionUnderQuota.refusal(book(6, 4), "b", gpu(1), List.of(pod("a", 3))))
        .contains("quota team-a would fall below its min: nvidia.com/gpu used 6 - 3 < min 4");
  }

  @Test
  void aTeamWithinItsMinNeverPreemptsItsOwnPodsEvenBesideABorrowersOne() {
    var own = "quota team-b is within its min nvidia.com/gpu=8 with this pod: it gets GPUs back from teams that borrow, never by preempting its own pods";
    assertThat(PreemptionUnderQuota.refusal(book(6, 4), "b", gpu(1), List.of(pod("b", 1)))).contains(own);
    assertThat(PreemptionUnderQuota.refusal(book(6, 4), "b", gpu(1), List.of(pod("a", 1), pod("b", 1)))).contains(own);
  }

  @Test
  void aBorrowingTeamPreemptsOnlyItsOwnPods() {
    assertThat(PreemptionUnderQuota.refusal(book(6, 4), "a", gpu(1), List.of(pod("b", 1))))
        .contains("quota team-a would borrow beyond its min nvidia.com/gpu=4 with this pod: it may preempt only pods of its own team, not of team-b");
    assertThat(PreemptionUnderQuota.refusal(book(6, 4), "a", gpu(1), List.of(pod("a", 1)))).isEmpty();
  }

  @Test
  void aBorrowingTeamTakesNoUnderMinTeamsPodsWhateverTheirPriority() {
    // team-b at 8 of min 8, team-a borrowing: a high-priority pod of team-a may not take team-b's.
    assertThat(PreemptionUnderQuota.refusal(book(4, 8), "a", gpu(1), List.of(pod("b", 1))))
        .contains("quota team-a would borrow beyond its min nvidia.com/gpu=4 with this pod: it may preempt only pods of its own team, not of team-b");
  }

  @Test
  void aPodOfNoTeamTakesOnlyWhatLeavesEveryTeamItsMin() {
    assertThat(PreemptionUnderQuota.refusal(book(6, 8), "elsewhere", gpu(1), List.of(pod("a", 2)))).isEmpty();
    assertThat(PreemptionUnderQuota.refusal(book(6, 8), "elsewhere", gpu(1), List.of(pod("b", 1))))
        .contains("quota team-b would fall below its min: nvidia.com/gpu used 8 - 1 < min 8");
  }

  @Test
  void victimsOfNoTeamHaveNoMinToKeep() {
    assertThat(PreemptionUnderQuota.refusal(book(4, 4), "b", gpu(1), List.of(pod("elsewhere", 4)))).isEmpty();
  }

  @Test
  void anEvictionThatLeavesThePodOverItsMaxIsRefused() {
    assertThat(PreemptionUnderQuota.refusal(book(8, 0), "a", gpu(1), List.of(pod("elsewhere", 1))))
        .contains("quota team-a: nvidia.com/gpu used 8 + asked 1 > max 8 even with the victims gone");
    assertThat(PreemptionUnderQuota.refusal(book(8, 0), "a", gpu(1), List.of(pod("a", 1)))).isEmpty();
  }

  @Test
  void victimsOfSeveralTeamsAreCountedTogether() {
    // One victim of team-a keeps its min; two together do not.
    assertThat(PreemptionUnderQuota.refusal(book(6, 2), "b", gpu(1), List.of(pod("a", 2)))).isEqualTo(Optional.empty());
    assertThat(PreemptionUnderQuota.refusal(book(6, 2), "b", gpu(1), List.of(pod("a", 2), QuotaPod.of("another", "a", gpu(1), 0, 0))))
        .contains("quota team-a would fall below its min: nvidia.com/gpu used 6 - 3 < min 4");
  }
}
