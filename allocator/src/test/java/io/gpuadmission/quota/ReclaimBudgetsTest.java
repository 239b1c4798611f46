package io.gpuadmission.quota;

import static io.gpuadmission.quota.QuotaTreeTest.gpu;
import static io.gpuadmission.quota.QuotaTreeTest.leaf;
import static io.gpuadmission.quota.QuotaTreeTest.root;
import static io.gpuadmission.quota.QuotaTreeTest.tree;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Reclaim weighs PodDisruptionBudgets as kube-scheduler's preemption does: fewest violations first, never a veto. */
class ReclaimBudgetsTest {
  private final WholeGpuNodes nodes = new WholeGpuNodes();

  private Optional<ReclaimPlan> plan(QuotaTree tree, QuotaPod pending, DisruptionAllowance budgets, String... nodes) {
    var room = this.nodes.room(pending.ask().get("nvidia.com/gpu"), uids -> {});
    return ReclaimPlanner.plan(this.nodes.book(tree), pending, List.of(nodes), this.nodes.running(), room, budgets);
  }

  private static ReclaimVictim victim(QuotaPod pod, String node) {
    return new ReclaimVictim(pod, node, "team-b", "team-a");
  }

  /** n1 frees 4 GPUs by evicting b1 alone; n2 by evicting b2 and b3. */
  private QuotaTree twoNodes() {
    nodes.run("a0", "a", 4, 0, 0, "n1");
    nodes.run("b1", "b", 4, 0, 100, "n1");
    nodes.run("a1", "a", 4, 0, 0, "n2");
    nodes.run("b2", "b", 2, 0, 200, "n2");
    nodes.run("b3", "b", 2, 0, 300, "n2");
    return tree(root(16, leaf("team-a", 12, 16, "a"), leaf("team-b", 0, 16, "b")));
  }

  @Test
  void moreVictimsThatViolateNoBudgetWinOverFewerThatViolateOne() {
    var tree = twoNodes();
    var b2 = nodes.running().get(3).pod();
    var b3 = nodes.running().get(4).pod();
    var pending = QuotaPod.of("p", "a", gpu(4), 0, 500);

    assertThat(plan(tree, pending, DisruptionAllowance.NONE, "n1", "n2"))
        .contains(new ReclaimPlan("n1", List.of(victim(nodes.running().get(1).pod(), "n1"))));
    var guarded = new DisruptionAllowance(Map.of("b/guard-b1", 0), Map.of("b1", List.of("b/guard-b1")));
    assertThat(plan(tree, pending, guarded, "n1", "n2"))
        .contains(new ReclaimPlan("n2", List.of(victim(b2, "n2"), victim(b3, "n2"))));
  }

  @Test
  void aBudgetThatAllowsTheDisruptionIsNoViolation() {
    var tree = twoNodes();
    var everyB = List.of("b/all");
    var allowsOne = new DisruptionAllowance(Map.of("b/all", 1), Map.of("b1", everyB, "b2", everyB, "b3", everyB));

    // n1 takes one disruption of the one allowed; n2 would take two, the second violating.
    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(4), 0, 500), allowsOne, "n1", "n2"))
        .contains(new ReclaimPlan("n1", List.of(victim(nodes.running().get(1).pod(), "n1"))));
  }

  @Test
  void aViolationStillReclaimsWhenItIsTheOnlyWay() {
    var tree = twoNodes();
    var b2 = nodes.running().get(3).pod();
    var b3 = nodes.running().get(4).pod();
    var guarded = new DisruptionAllowance(Map.of("b/guard", 0), Map.of("b2", List.of("b/guard"), "b3", List.of("b/guard")));

    assertThat(plan(tree, QuotaPod.of("p", "a", gpu(4), 0, 500), guarded, "n2"))
        .contains(new ReclaimPlan("n2", List.of(victim(b2, "n2"), victim(b3, "n2"))));
  }

  @Test
  void aGangCountsEveryMemberItsBudgetsSelectOnWhateverNode() {
    var tree = tree(root(16, leaf("team-a", 8, 16, "a"), leaf("team-b", 2, 16, "b")));
    nodes.run("a0", "a", 4, 0, 0, "n1");
    var g1 = nodes.runGang("g1", "b", 4, "trainer", "n1");
    var g2 = nodes.runGang("g2", "b", 2, "trainer", "n2");
    var lone = nodes.run("lone", "b", 4, 100, 0, "n2");
    nodes.run("b0", "b", 2, 0, 0, "n2");
    var pending = QuotaPod.of("p", "a", gpu(4), 0, 0);

    // The lone pod's budget allows nothing: the gang of two wins, though it is more victims.
    var loneGuarded = Map.of("b/lone", 0, "b/trainer", 1);
    assertThat(plan(tree, pending, new DisruptionAllowance(loneGuarded, Map.of("lone", List.of("b/lone"), "g1", List.of("b/trainer"))), "n1", "n2"))
        .contains(new ReclaimPlan("n1", List.of(victim(g1, "n1"), victim(g2, "n2"))));
    // The gang's budget allows one disruption and selects both members: its member on n2 violates it
    // too, so both sets violate one budget once and the fewer victims win again.
    var both = new DisruptionAllowance(loneGuarded, Map.of("lone", List.of("b/lone"), "g1", List.of("b/trainer"), "g2", List.of("b/trainer")));
    assertThat(plan(tree, pending, both, "n1", "n2"))
        .contains(new ReclaimPlan("n2", List.of(victim(lone, "n2"))));
  }

  @Test
  void violationsAreCountedMostImportantFirstOncePerPod() {
    var high = new RunningPod(QuotaPod.of("high", "b", gpu(1), 10, 500), "n1");
    var older = new RunningPod(QuotaPod.of("older", "b", gpu(1), 0, 100), "n1");
    var younger = new RunningPod(QuotaPod.of("younger", "b", gpu(1), 0, 200), "n1");
    var budgets = new DisruptionAllowance(
        Map.of("b/one", 1, "b/none", 0),
        Map.of("high", List.of("b/one"), "older", List.of("b/one", "b/none"), "younger", List.of("b/one")));

    assertThat(budgets.violations(List.of(younger, older, high))).isEqualTo(2);
    assertThat(budgets.violations(List.of(younger, high))).isEqualTo(1);
    assertThat(budgets.violations(List.of(older))).isEqualTo(1);
    assertThat(budgets.violations(List.of(younger))).isZero();
    assertThat(DisruptionAllowance.NONE.violations(List.of(younger, older, high))).isZero();
  }

  @Test
  void aBudgetWithoutAnAllowedCountIsRefused() {
    assertThatThrownBy(() -> new DisruptionAllowance(Map.of(), Map.of("p", List.of("b/gone"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("pod p is counted by budget b/gone, which allows no known number of disruptions");
  }
}
