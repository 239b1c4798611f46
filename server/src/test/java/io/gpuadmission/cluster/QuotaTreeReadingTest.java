package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTreeCheck;
import io.gpuadmission.support.Fixtures;
import org.junit.jupiter.api.Test;

/** ElasticQuotaTree objects as YAML, read into the quota core's tree and checked against ACK's rules. */
class QuotaTreeReadingTest {
  private static QuotaTreeCheck check(String file) {
    return QuotaTreeReading.check(Fixtures.yamlTree(Fixtures.path(file)));
  }

  @Test
  void readsEveryQuotaNodeWithItsAmountsInCanonicalUnits() {
    var tree = ((QuotaTreeCheck.Valid) check("quota/tree.yaml")).tree();

    assertThat(tree.nodes()).extracting(n -> n.name() + " " + n.path())
        .containsExactly("root spec.root", "team-a spec.root.children[0]", "team-b spec.root.children[1]", "team-c spec.root.children[2]");
    var teamA = tree.leafOf("quota-a").orElseThrow();
    assertThat(teamA.min()).isEqualTo(QuotaResources.of("nvidia.com/gpu", 2, "aliyun.com/gpu-mem", 16));
    assertThat(teamA.max()).isEqualTo(QuotaResources.of("nvidia.com/gpu", 6, "aliyun.com/gpu-mem", 24));
    assertThat(tree.leafOf("quota-c").orElseThrow().name()).isEqualTo("team-c");
    assertThat(tree.leafOf("default")).isEmpty();
  }

  @Test
  void quantitiesAsStringsCountAsKubernetesReadsThem() {
    var object = Fixtures.yamlTree(Fixtures.path("quota/tree.yaml"));
    var root = (com.fasterxml.jackson.databind.node.ObjectNode) object.path("spec").path("root");
    ((com.fasterxml.jackson.databind.node.ObjectNode) root.path("min")).put("cpu", "1500m").put("memory", "2Gi");
    ((com.fasterxml.jackson.databind.node.ObjectNode) root.path("max")).put("cpu", "1.5").put("memory", " 2048Mi ");

    var tree = ((QuotaTreeCheck.Valid) QuotaTreeReading.check(object)).tree();

    assertThat(tree.root().min().get("cpu")).isEqualTo(1500);
    assertThat(tree.root().max().get("memory")).isEqualTo(2L << 30);
  }

  @Test
  void aTreeBreakingTheRulesGivesEachRuleWithItsPath() {
    var invalid = (QuotaTreeCheck.Invalid) check("quota/tree-broken.yaml");

    assertThat(QuotaTreeWatcher.describe(invalid.violations()))
        .isEqualTo("spec.root (root): its children's min nvidia.com/gpu sum to 10 > its min 8;"
            + " spec.root.children[0] (team-a): min nvidia.com/gpu 6 > max 4;"
            + " spec.root.children[1] (team-b): namespace quota-a is already in leaf team-a");
  }

  @Test
  void whatCannotBeReadIsNamedByItsPath() {
    var invalid = (QuotaTreeCheck.Invalid) check("quota/tree-unreadable.yaml");

    assertThat(QuotaTreeWatcher.describe(invalid.violations()))
        .isEqualTo("spec.root.max.nvidia.com/gpu (root): \"eight\" is not a quantity of at least 0 (a quantity is a number with an optional"
            + " suffix, such as 2, 500m, 16Gi or 1e3); spec.root.children[0]: a quota node must be a mapping {name, min, max, ...}");
  }
}
