package io.gpuadmission.quota;

import static io.gpuadmission.quota.QuotaTreeTest.gpu;
import static io.gpuadmission.quota.QuotaTreeTest.leaf;
import static io.gpuadmission.quota.QuotaTreeTest.root;
import static io.gpuadmission.quota.QuotaTreeTest.tree;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class QuotaAdmissionTest {
  // 32 GPUs: team-a guaranteed 8 and may borrow up to 16; team-b 16/32; team-c 8/32.
  private final QuotaTree tree = tree(root(32, leaf("team-a", 8, 16, "a"), leaf("team-b", 16, 32, "b"), leaf("team-c", 8, 32, "c")));

  private QuotaBook book(long a, long b, long c) {
    var pods = new ArrayList<QuotaPod>();
    pods.add(QuotaPod.of("a", "a", gpu(a), 0, 0));
    pods.add(QuotaPod.of("b", "b", gpu(b), 0, 0));
    pods.add(QuotaPod.of("c", "c", gpu(c), 0, 0));
    pods.add(QuotaPod.of("free", "no-quota", gpu(5), 0, 0));
    return QuotaBook.of(tree, pods);
  }

  @Test
  void countsUsageOnLeafAndAncestorsOnly() {
    var book = book(14, 3, 0);
    assertThat(book.used(tree.node("team-a").orElseThrow())).isEqualTo(gpu(14));
    assertThat(book.borrowed(tree.node("team-a").orElseThrow())).isEqualTo(gpu(6));
    assertThat(book.borrowed(tree.node("team-b").orElseThrow())).isEqualTo(gpu(0));
    assertThat(book.used(tree.root())).isEqualTo(gpu(17));
  }

  @Test
  void refusesPodThatWouldPassItsLeafsMax() {
    assertThat(QuotaAdmission.admit(book(14, 0, 0), "a", gpu(4)))
        .isEqualTo(new QuotaDecision.Refused("team-a", "quota team-a: nvidia.com/gpu used 14 + asked 4 > max 16", false));
  }

  @Test
  void admitsIdenticalPodOfAnotherNamespace() {
    assertThat(QuotaAdmission.admit(book(14, 0, 0), "b", gpu(4))).isEqualTo(new QuotaDecision.Admitted(Optional.of("team-b")));
  }

  @Test
  void admitsNamespaceOfNoLeaf() {
    assertThat(QuotaAdmission.admit(book(16, 16, 0), "no-quota", gpu(40))).isEqualTo(new QuotaDecision.Admitted(Optional.empty()));
  }

  @Test
  void borrowsUpToMaxWhileOthersAreIdle() {
    assertThat(QuotaAdmission.admit(book(12, 0, 0), "a", gpu(4))).isEqualTo(new QuotaDecision.Admitted(Optional.of("team-a")));
  }

  @Test
  void admitsUnderMinWhateverOthersBorrow() {
    // team-b borrows 12 of the others' min; team-c asks within its own 8.
    assertThat(QuotaAdmission.admit(book(8, 20, 0), "c", gpu(4))).isEqualTo(new QuotaDecision.Admitted(Optional.of("team-c")));
  }

  @Test
  void saysReclaimIsDueWhenBorrowersFillTheRootUnderALeafsMin() {
    assertThat(QuotaAdmission.admit(book(8, 24, 0), "c", gpu(8)))
        .isEqualTo(new QuotaDecision.Refused("root", "quota root: nvidia.com/gpu used 32 + asked 8 > max 32", true));
  }

  @Test
  void refusesBorrowerAboveItsFairShareOfIdleCapacity() {
    // Idle = 32 - (8 + 16 + 0) = 8 shared by the borrowers a (min 8) and b (min 16): 2.67 and 5.33,
    // rounded down to 2 and 5; the unit left goes to a, whose remainder is larger. team-a may reach 11.
    var book = book(8, 16, 0);
    assertThat(book.fairLimit(tree.node("team-a").orElseThrow(), "nvidia.com/gpu")).isEqualTo(11);
    assertThat(book.fairLimit(tree.node("team-b").orElseThrow(), "nvidia.com/gpu")).isEqualTo(21);
    assertThat(QuotaAdmission.admit(book, "a", gpu(4)))
        .isEqualTo(new QuotaDecision.Refused("team-a", "quota team-a: nvidia.com/gpu used 8 + asked 4 > fair share 11 of idle capacity (max 16)", false));
    assertThat(QuotaAdmission.admit(book, "a", gpu(3))).isEqualTo(new QuotaDecision.Admitted(Optional.of("team-a")));
  }

  @Test
  void lendsAllIdleCapacityToTheOnlyBorrower() {
    var book = book(8, 0, 0);
    // Idle 24; team-a alone claims it, capped at max 16 - min 8. Were team-c to borrow too, it would
    // get 12 by its weight (8 of 16) but team-a's cap leaves it the other 16.
    assertThat(book.fairLimit(tree.node("team-a").orElseThrow(), "nvidia.com/gpu")).isEqualTo(16);
    assertThat(book.fairLimit(tree.node("team-c").orElseThrow(), "nvidia.com/gpu")).isEqualTo(24);
  }

  @Test
  void admitsOrRefusesGangWhole() {
    var members = List.of(gpu(2), gpu(2), gpu(2));
    assertThat(QuotaAdmission.admitGang(book(12, 0, 0), "a", members))
        .isEqualTo(new QuotaDecision.Refused("team-a", "quota team-a: nvidia.com/gpu used 12 + asked 6 > max 16", false));
    assertThat(QuotaAdmission.admitGang(book(10, 0, 0), "a", members)).isEqualTo(new QuotaDecision.Admitted(Optional.of("team-a")));
  }

  @Test
  void refusesAtTheFirstAncestorWhoseMaxWouldPass() {
    var research = QuotaNodeSpec.parent("research", gpu(8), gpu(12), List.of(leaf("team-a", 4, 12, "a"), leaf("team-b", 4, 12, "b")));
    var tree = tree(root(16, research, leaf("team-c", 8, 16, "c")));
    var book = QuotaBook.of(tree, List.of(QuotaPod.of("b", "b", gpu(10), 0, 0)));

    assertThat(QuotaAdmission.admit(book, "a", gpu(4)))
        .isEqualTo(new QuotaDecision.Refused("research", "quota research: nvidia.com/gpu used 10 + asked 4 > max 12", true));
  }

  @Test
  void countsSharesAndWholeGpusInOneTree() {
    var mem = "aliyun.com/gpu-mem";
    var root = QuotaNodeSpec.parent("root", QuotaResources.of("nvidia.com/gpu", 8, mem, 128), QuotaResources.of("nvidia.com/gpu", 8, mem, 128), List.of(
        QuotaNodeSpec.leaf("share", QuotaResources.of(mem, 32), QuotaResources.of(mem, 48), List.of("s")),
        QuotaNodeSpec.leaf("whole", QuotaResources.of("nvidia.com/gpu", 4), QuotaResources.of("nvidia.com/gpu", 8), List.of("w"))));
    var book = QuotaBook.of(tree(root), List.of(QuotaPod.of("s1", "s", QuotaResources.of(mem, 40), 0, 0), QuotaPod.of("w1", "w", gpu(6), 0, 0)));

    assertThat(QuotaAdmission.admit(book, "s", QuotaResources.of(mem, 10)))
        .isEqualTo(new QuotaDecision.Refused("share", "quota share: aliyun.com/gpu-mem used 40 + asked 10 > max 48", false));
    assertThat(QuotaAdmission.admit(book, "w", gpu(2))).isEqualTo(new QuotaDecision.Admitted(Optional.of("whole")));
    assertThat(QuotaAdmission.admit(book, "w", gpu(3)))
        .isEqualTo(new QuotaDecision.Refused("whole", "quota whole: nvidia.com/gpu used 6 + asked 3 > max 8", false));
  }
}
