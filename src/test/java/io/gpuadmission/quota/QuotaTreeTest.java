package io.gpuadmission.quota;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class QuotaTreeTest {
  private static final String GPU = "nvidia.com/gpu";

  static QuotaResources gpu(long n) {
    return QuotaResources.of(GPU, n);
  }

  static QuotaNodeSpec leaf(String name, long min, long max, String... namespaces) {
    return QuotaNodeSpec.leaf(name, gpu(min), gpu(max), List.of(namespaces));
  }

  static QuotaNodeSpec root(long total, QuotaNodeSpec... children) {
    return QuotaNodeSpec.parent("root", gpu(total), gpu(total), List.of(children));
  }

  static List<QuotaRuleViolation> violations(QuotaNodeSpec root) {
    return switch (QuotaTree.check(root)) {
      case QuotaTreeCheck.Invalid invalid -> invalid.violations();
      case QuotaTreeCheck.Valid valid -> List.of();
    };
  }

  static QuotaTree tree(QuotaNodeSpec root) {
    return switch (QuotaTree.check(root)) {
      case QuotaTreeCheck.Valid valid -> valid.tree();
      case QuotaTreeCheck.Invalid invalid -> throw new AssertionError(invalid.violations());
    };
  }

  @Test
  void acceptsTreeThatKeepsEveryRule() {
    var tree = tree(QuotaNodeSpec.parent("root", gpu(16), gpu(16), List.of(
        QuotaNodeSpec.parent("research", gpu(10), gpu(16), List.of(leaf("team-a", 4, 16, "a1", "a2"), leaf("team-b", 6, 8, "b"))),
        leaf("team-c", 6, 16, "c"))));

    assertThat(tree.leafOf("a2").map(QuotaNode::name)).contains("team-a");
    assertThat(tree.leafOf("a2").orElseThrow().pathToRoot()).extracting(QuotaNode::name).containsExactly("team-a", "research", "root");
    assertThat(tree.leafOf("a2").orElseThrow().path()).isEqualTo("spec.root.children[0].children[0]");
    assertThat(tree.leafOf("elsewhere")).isEmpty();
    assertThat(tree.nodes()).extracting(QuotaNode::name).containsExactly("root", "research", "team-a", "team-b", "team-c");
  }

  @Test
  void refusesNameUsedTwice() {
    assertThat(violations(root(16, leaf("team-a", 4, 16, "a"), leaf("team-a", 4, 16, "b"))))
        .containsExactly(new QuotaRuleViolation("spec.root.children[1]", "team-a", "name team-a is already used at spec.root.children[0]"));
  }

  @Test
  void refusesNamespacesOnParent() {
    var parent = new QuotaNodeSpec("research", gpu(8), gpu(16), List.of("x"), List.of(leaf("team-a", 4, 16, "a")));
    assertThat(violations(root(16, parent)))
        .containsExactly(new QuotaRuleViolation("spec.root.children[0]", "research", "namespaces belong on leaves, not on a quota node with children"));
  }

  @Test
  void refusesNamespaceInTwoLeaves() {
    assertThat(violations(root(16, leaf("team-a", 4, 16, "a", "shared"), leaf("team-b", 4, 16, "shared"))))
        .containsExactly(new QuotaRuleViolation("spec.root.children[1]", "team-b", "namespace shared is already in leaf team-a"));
  }

  @Test
  void refusesRootWhoseMaxIsNotItsMin() {
    var root = QuotaNodeSpec.parent("root", gpu(8), QuotaResources.of(GPU, 16, "cpu", 4000), List.of(leaf("team-a", 4, 8, "a")));
    assertThat(violations(root)).containsExactly(
        new QuotaRuleViolation("spec.root", "root", "the root's max must equal its min: cpu max 4, min unset"),
        new QuotaRuleViolation("spec.root", "root", "the root's max must equal its min: nvidia.com/gpu max 16, min 8"));
  }

  @Test
  void refusesMinAboveMax() {
    assertThat(violations(root(16, leaf("team-a", 10, 8, "a"))))
        .containsExactly(new QuotaRuleViolation("spec.root.children[0]", "team-a", "min nvidia.com/gpu 10 > max 8"));
  }

  @Test
  void refusesChildrenWhoseMinsSumAboveParentsMin() {
    assertThat(violations(root(16, leaf("team-a", 10, 16, "a"), leaf("team-b", 8, 16, "b"))))
        .containsExactly(new QuotaRuleViolation("spec.root", "root", "its children's min nvidia.com/gpu sum to 18 > its min 16"));
  }

  @Test
  void refusesChildMaxAboveParentsMax() {
    var research = QuotaNodeSpec.parent("research", gpu(8), gpu(12), List.of(leaf("team-a", 4, 14, "a")));
    assertThat(violations(root(16, research)))
        .containsExactly(new QuotaRuleViolation("spec.root.children[0].children[0]", "team-a", "max nvidia.com/gpu 14 > max 12 of its parent research"));
  }

  @Test
  void writesAmountsAsKubernetesQuantities() {
    var leaf = QuotaNodeSpec.leaf("team-a", QuotaResources.of("memory", 32L << 30, "cpu", 1500),
        QuotaResources.of("memory", 16L << 30, "cpu", 1000), List.of("a"));
    var root = QuotaNodeSpec.parent("root", QuotaResources.of("memory", 64L << 30, "cpu", 8000),
        QuotaResources.of("memory", 64L << 30, "cpu", 8000), List.of(leaf));
    assertThat(violations(root)).extracting(QuotaRuleViolation::message).containsExactly(
        "spec.root.children[0] (team-a): min cpu 1500m > max 1",
        "spec.root.children[0] (team-a): min memory 32Gi > max 16Gi");
  }
}
