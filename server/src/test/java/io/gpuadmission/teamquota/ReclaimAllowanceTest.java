package io.gpuadmission.teamquota;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.preemption.DisruptionBudgets;
import io.gpuadmission.preemption.PodFacts;
import io.gpuadmission.quota.DisruptionAllowance;
import io.gpuadmission.quota.QuotaPod;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.RunningPod;
import io.gpuadmission.support.Fixtures;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The PodDisruptionBudgets preemption keeps, as the quota reclaim planner is given them. */
class ReclaimAllowanceTest {
  private final Map<String, PodFacts> facts = new HashMap<>();
  private final List<RunningPod> running = new java.util.ArrayList<>();

  private void run(String namespace, String name, Map<String, String> labels) {
    var uid = "uid-" + name;
    facts.put(uid, new PodFacts(uid, namespace, name, 0, Instant.EPOCH, false, false, Optional.empty(), "whole-a", "", labels, GpuAsk.share(1)));
    running.add(new RunningPod(QuotaPod.of(uid, namespace, QuotaResources.NONE, 0, 0), "whole-a"));
  }

  private static DisruptionBudgets fixtures() {
    var budgets = new DisruptionBudgets();
    for (var item : Fixtures.yamlTree(Fixtures.path("quota/pdbs.yaml")).path("items")) {
      budgets.current(KubernetesJson.mapper().convertValue(item, PodDisruptionBudget.class));
    }
    return budgets;
  }

  @Test
  void eachPodIsCountedByTheBudgetsOfItsNamespaceThatSelectItAndDoNotCountItDisruptedAlready() {
    run("quota-b", "trainer-0", Map.of("app", "trainer"));
    run("quota-b", "trainer-1", Map.of("app", "trainer"));
    run("quota-b", "server-0", Map.of("app", "trainer", "role", "serving"));
    run("quota-b", "unlabelled", Map.of());
    run("quota-a", "trainer-a", Map.of("app", "trainer"));
    running.add(new RunningPod(QuotaPod.of("uid-unknown", "quota-b", QuotaResources.NONE, 0, 0), "whole-a"));

    var allowance = ReclaimAllowance.of(fixtures(), running, uid -> Optional.ofNullable(facts.get(uid)));

    assertThat(allowance.allowed()).isEqualTo(Map.of("quota-a/trainers", 3, "quota-b/servers", 0, "quota-b/trainers", 1));
    assertThat(allowance.budgetsOf("uid-trainer-0")).isEmpty();
    assertThat(allowance.budgetsOf("uid-trainer-1")).containsExactly("quota-b/trainers");
    assertThat(allowance.budgetsOf("uid-server-0")).containsExactly("quota-b/servers", "quota-b/trainers");
    assertThat(allowance.budgetsOf("uid-unlabelled")).isEmpty();
    assertThat(allowance.budgetsOf("uid-trainer-a")).containsExactly("quota-a/trainers");
    assertThat(allowance.budgetsOf("uid-unknown")).isEmpty();
  }

  @Test
  void noBudgetsGiveThePlannerNone() {
    run("quota-b", "trainer-1", Map.of("app", "trainer"));

    assertThat(ReclaimAllowance.of(new DisruptionBudgets(), running, uid -> Optional.ofNullable(facts.get(uid))))
        .isSameAs(DisruptionAllowance.NONE);
  }
}
