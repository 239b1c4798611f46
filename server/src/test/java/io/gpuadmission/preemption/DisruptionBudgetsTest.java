package io.gpuadmission.preemption;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which pods a budget selects, as kube-scheduler's preemption reads a PodDisruptionBudget's selector. */
class DisruptionBudgetsTest {
  private static final Map<String, String> WEB = Map.of("app", "web", "tier", "front");

  private static LabelSelector expression(String key, String operator, String... values) {
    return new LabelSelectorBuilder().addNewMatchExpression().withKey(key).withOperator(operator).withValues(values).endMatchExpression().build();
  }

  @Test
  void matchLabelsAndEveryOperator() {
    assertThat(DisruptionBudgets.selects(new LabelSelectorBuilder().addToMatchLabels("app", "web").build(), WEB)).isTrue();
    assertThat(DisruptionBudgets.selects(new LabelSelectorBuilder().addToMatchLabels("app", "db").build(), WEB)).isFalse();
    assertThat(DisruptionBudgets.selects(expression("tier", "In", "front", "back"), WEB)).isTrue();
    assertThat(DisruptionBudgets.selects(expression("tier", "NotIn", "front"), WEB)).isFalse();
    assertThat(DisruptionBudgets.selects(expression("zone", "NotIn", "a"), WEB)).isTrue();
    assertThat(DisruptionBudgets.selects(expression("app", "Exists"), WEB)).isTrue();
    assertThat(DisruptionBudgets.selects(expression("app", "DoesNotExist"), WEB)).isFalse();
    assertThat(DisruptionBudgets.selects(expression("app", "Gt", "1"), WEB)).isFalse();
  }

  @Test
  void aMissingOrEmptySelectorSelectsNothing() {
    assertThat(DisruptionBudgets.selects(null, WEB)).isFalse();
    assertThat(DisruptionBudgets.selects(new LabelSelector(), WEB)).isFalse();
  }
}
