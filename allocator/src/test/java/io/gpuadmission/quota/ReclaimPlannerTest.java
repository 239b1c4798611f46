package io.gpuadmission.quota;

import static io.gpuadmission.quota.QuotaTreeTest.gpu;
import static io.gpuadmission.quota.QuotaTreeTest.leaf;
import static io.gpuadmission.quota.QuotaTreeTest.root;
import static io.gpuadmission.quota.QuotaTreeTest.tree;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReclaimPlannerTest {
  private final WholeGpuNodes nodes = new WholeGpuNodes();
  private final List<Set<String>> asked = new ArrayList<>();

  private Optional<ReclaimPlan> plan(QuotaTree tree, QuotaPod pending, String... nodes) {
    return ReclaimPlanner.plan(
        this.nodes.book(tree), pending, List.of(nodes), this.nodes.running(), this.nodes.room(pending.ask().get("nvidia.com/gpu"), asked::add));
  }

  @Test
  void takesFewestVictimsFromBorrowerAndNeverFromLeafAtItsMin() {
    var tree = tree(root(16, leaf("team-a", 8, 16, "a"), leaf("team-b", 4, 16, "b"), leaf("team-c", 4, 16, "c")));
    nodes.run("c1", "c", 4, 0, 50, "n1");
    nodes.run("b1", "b", 2, 0, 100, "n1");
    nodes.run("b2", "b", 2, 0, 200, "n1");
    nodes.run("a0", "a", 2, 0, 10, "n2");
    var b3 = nodes.run("b3", "b", 4, 0, 300, "n2");
    nodes.run("b4", "b", 2, 0, 400, "n2");

    var plan = plan(tree, QuotaPod.of("p", "a", gpu(4), 0, 500), "n1", "n2");

    // n1 would need b1 and b2 (c1 is team-c's min); n2 frees 4 with b3 alone.
    assertThat(plan).contains(new ReclaimPlan("n2", List.of(new ReclaimVictim(b3, "n2", "team-b", "team-a"))));
    assertThat(asked).noneMatch(uids -> uids.contains("c1"));
  }

  @Test
  void takesNoVictimThatWouldPushItsLeafUnderItsMin() {
    var tree = tree(root(8, leaf("team-a", 4, 8, "a"), leaf("team-b", 2, 8, "b"), leaf("team-c", 2, 8, "c")));
    nodes.run("c1", "c", 4, 0, 0, "n1");
    nodes.run("b1", "b", 2, 0, 0, "n1");
    nodes.run("b2", "b", 2, 0, 0, "n1");

    // team-b borrows 2 and may give one pod of 2, not both (it would be left 0 < 2); team-c borrows
    // 2 but its one pod holds 4. Freeing 4 GPUs would take a min; so no plan.
    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(4), 0, 0), "n1")).isEmpty();
    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(2), 0, 0), "n1"))
        .map(found -> found.victims().stream().map(victim -> victim.pod().uid()).toList())
        .contains(List.of("b1"));
  }

  @Test
  void prefersLowestPriorityThenYoungest() {
    var tree = tree(root(16, leaf("team-a", 8, 16, "a"), leaf("team-b", 2, 16, "b")));
    nodes.run("a0", "a", 2, 0, 0, "n1");
    nodes.run("b1", "b", 2, 5, 300, "n1");
    nodes.run("b2", "b", 2, 1, 100, "n1");
    var b3 = nodes.run("b3", "b", 2, 1, 200, "n1");

    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(2), 0, 0), "n1"))
        .contains(new ReclaimPlan("n1", List.of(new ReclaimVictim(b3, "n1", "team-b", "team-a"))));
  }

  @Test
  void evictsGangWholeAndCountsMembersOnOtherNodes() {
    var tree = tree(root(16, leaf("team-a", 8, 16, "a"), leaf("team-b", 2, 16, "b")));
    nodes.run("a0", "a", 4, 0, 0, "n1");
    var g1 = nodes.runGang("g1", "b", 4, "trainer", "n1");
    var g2 = nodes.runGang("g2", "b", 4, "trainer", "n2");
    nodes.run("b9", "b", 2, 0, 0, "n2");

    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(4), 0, 0), "n1"))
        .contains(new ReclaimPlan("n1", List.of(
            new ReclaimVictim(g1, "n1", "team-b", "team-a"), new ReclaimVictim(g2, "n2", "team-b", "team-a"))));
  }

  @Test
  void prefersSinglePodOfHigherPriorityToGangOfTwo() {
    var tree = tree(root(16, leaf("team-a", 8, 16, "a"), leaf("team-b", 2, 16, "b")));
    nodes.run("a0", "a", 4, 0, 0, "n1");
    nodes.runGang("g1", "b", 4, "trainer", "n1");
    nodes.runGang("g2", "b", 2, "trainer", "n2");
    var lone = nodes.run("lone", "b", 4, 100, 0, "n2");
    nodes.run("b0", "b", 2, 0, 0, "n2");

    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(4), 0, 0), "n1", "n2"))
        .contains(new ReclaimPlan("n2", List.of(new ReclaimVictim(lone, "n2", "team-b", "team-a"))));
  }

  @Test
  void reclaimsOnlyForLeafThatStaysWithinItsMin() {
    var tree = tree(root(16, leaf("team-a", 4, 16, "a"), leaf("team-b", 2, 16, "b")));
    nodes.run("a0", "a", 2, 0, 0, "n1");
    nodes.run("b1", "b", 6, 0, 0, "n1");

    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(4), 0, 0), "n1")).isEmpty();
    assertThat(plan(tree, QuotaPod.of("p", "elsewhere", gpu(1), 0, 0), "n1")).isEmpty();
    assertThat(asked).isEmpty();
  }

  @Test
  void needsNoVictimWhenThePodFitsAlready() {
    var tree = tree(root(16, leaf("team-a", 4, 16, "a"), leaf("team-b", 2, 16, "b")));
    nodes.run("b1", "b", 6, 0, 0, "n1");

    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(2), 0, 0), "n1")).contains(new ReclaimPlan("n1", List.of()));
  }
}
