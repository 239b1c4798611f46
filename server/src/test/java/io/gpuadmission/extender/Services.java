package io.gpuadmission.extender;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.placement.ChoicesInFlight;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.WorkloadLearner;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.preemption.CandidateReview;
import io.gpuadmission.preemption.DisruptionBudgets;
import io.gpuadmission.preemption.GpuPreemptor;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.preemption.PreemptionMetrics;
import io.gpuadmission.preemption.PreemptionSearch;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;

/** Extender services built by hand, as PlacementWiring builds them in the app. */
final class Services {
  private Services() {}

  /** A service whose preemptor never acts: its gate never leads and it has no cluster. */
  static ExtenderService withoutPreemption(PlacementDecider decider, GangGate gangs, PolicyStore policies, GpuLedger ledger) {
    return withoutPreemption(decider, gangs, policies, ledger, new WorkloadLearner(Clock.systemUTC(), () -> Duration.ofHours(1)));
  }

  /** As above, FGD's workload learned by {@code learner}. */
  static ExtenderService withoutPreemption(PlacementDecider decider, GangGate gangs, PolicyStore policies, GpuLedger ledger, WorkloadLearner learner) {
    return with(decider, gangs, policies, ledger, new PodFactsIndex(policies::current, ledger), null, new LeaderGate("never-leads"), learner);
  }

  /** A service with a preemptor on {@code client}, acting while {@code gate} leads. */
  static ExtenderService with(
      PlacementDecider decider, GangGate gangs, PolicyStore policies, GpuLedger ledger, PodFactsIndex pods, KubernetesClient client, LeaderGate gate) {
    return with(decider, gangs, policies, ledger, pods, client, gate, new WorkloadLearner(Clock.systemUTC(), () -> Duration.ofHours(1)));
  }

  private static ExtenderService with(
      PlacementDecider decider,
      GangGate gangs,
      PolicyStore policies,
      GpuLedger ledger,
      PodFactsIndex pods,
      KubernetesClient client,
      LeaderGate gate,
      WorkloadLearner learner) {
    var search = new PreemptionSearch(ledger, pods, decider, new DisruptionBudgets());
    var preemptor =
        new GpuPreemptor(
            client, search, decider, ledger, pods, gate, policies::current, Clock.systemUTC(),
            new GpuPreemptor.Timing(Duration.ofMillis(200), Duration.ofSeconds(30)), new PreemptionMetrics(new SimpleMeterRegistry()));
    var choices = new ChoicesInFlight(ledger, decider, gate, pods, Clock.systemUTC(), Duration.ofSeconds(30), uid -> pods.facts(uid).isPresent());
    var quotas = io.gpuadmission.teamquota.QuotaGate.none(policies::current);
    return new ExtenderService(
        decider, gangs, policies, ledger, preemptor, new CandidateReview(search, preemptor, policies::current), pods, learner, choices,
        quotas, io.gpuadmission.teamquota.QuotaReclaimer.none(quotas, ledger, pods, decider, gate));
  }
}
