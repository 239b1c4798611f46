package io.gpuadmission.extender;

import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.cluster.ClusterConnection;
import io.gpuadmission.cluster.DisruptionBudgetWatcher;
import io.gpuadmission.cluster.LeaderPodLabel;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.cluster.NodeInventory;
import io.gpuadmission.cluster.PlacementLeadership;
import io.gpuadmission.cluster.WebhookNamespace;
import io.gpuadmission.gang.GangCoordinator;
import io.gpuadmission.gang.GangEvents;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.gang.GangMetrics;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangRegistry;
import io.gpuadmission.placement.ChoiceOverrides;
import io.gpuadmission.placement.ChoicesInFlight;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementConfig;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PodBinder;
import io.gpuadmission.placement.WorkloadLearner;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.preemption.CandidateReview;
import io.gpuadmission.preemption.DisruptionBudgets;
import io.gpuadmission.preemption.GangPreemptor;
import io.gpuadmission.preemption.GpuPreemptor;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.preemption.PreemptionMetrics;
import io.gpuadmission.preemption.PreemptionSearch;
import io.gpuadmission.preemption.VictimQuota;
import io.gpuadmission.teamquota.GangQuotaCheck;
import io.gpuadmission.teamquota.QuotaGate;
import io.gpuadmission.teamquota.QuotaReclaimSweep;
import io.gpuadmission.teamquota.QuotaReclaimer;
import io.gpuadmission.cluster.QuotaTreeStore;
import io.gpuadmission.preemption.PodRequeue;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Builds the placement objects (plain classes, so tests can build two replicas by hand) and runs
 * their lifecycle: ledger informers, leader election, expiry of unconfirmed assumptions.
 */
@ApplicationScoped
public class PlacementWiring {
  private final ClusterConnection cluster;
  private final PolicyStore policies;
  private final PlacementConfig config;
  private final WebhookNamespace namespace;
  private final NodeInventory nodes;
  private final GpuLedger ledger = new GpuLedger();
  private final WorkloadLearner learner;
  private final LeaderGate gate;
  private final GangRegistry gangs;
  private final PodFactsIndex podFacts;
  private final DisruptionBudgets budgets = new DisruptionBudgets();
  private DisruptionBudgetWatcher budgetWatcher;
  private final MeterRegistry meters;
  private final ChoiceOverrides overrides;
  private LedgerWatcher watcher;
  private GangCoordinator coordinator;
  private PlacementLeadership leadership;
  private LeaderPodLabel leaderLabel;
  private ScheduledExecutorService expiry;
  private QuotaReclaimSweep reclaimSweep;
  private final Duration reclaimSweepPeriod;

  public PlacementWiring(
      ClusterConnection cluster,
      PolicyStore policies,
      PlacementConfig config,
      WebhookNamespace namespace,
      NodeInventory nodes,
      MeterRegistry meters,
      @ConfigProperty(name = "gpu-admission.quotas.reclaim-sweep", defaultValue = "5s") Duration reclaimSweepPeriod) {
    this.nodes = nodes;
    this.reclaimSweepPeriod = reclaimSweepPeriod;
    this.meters = meters;
    this.gangs = new GangRegistry(policies::current);
    this.podFacts = new PodFactsIndex(policies::current, ledger);
    this.cluster = cluster;
    this.policies = policies;
    this.config = config;
    this.namespace = namespace;
    var identity =
        config.identity().or(() -> Optional.ofNullable(System.getenv("POD_NAME"))).orElseGet(PlacementWiring::hostName);
    // Without a cluster there is nobody to elect with and nothing to bind to: one replica leads.
    this.gate = cluster.available() ? new LeaderGate(identity) : LeaderGate.alone(identity);
    this.overrides = new ChoiceOverrides(node -> Counter.builder("gpu_admission_gpu_choice_overridden_total")
        .description("Pods whose node gave other whole GPUs than bind chose (its agent's gpu-allocated), as this replica saw them")
        .tag("node", node).register(meters).increment());
    this.learner =
        new WorkloadLearner(Clock.systemUTC(), () -> Duration.ofMinutes(policies.current().allocator().fgdWorkload().learnedWindowMinutes()));
  }

  @Produces
  @Singleton
  ChoiceOverrides overrides() {
    return overrides;
  }

  @Produces
  @Singleton
  GpuLedger ledger() {
    return ledger;
  }

  @Produces
  @Singleton
  LeaderGate gate() {
    return gate;
  }

  @Produces
  @Singleton
  WorkloadLearner learner() {
    return learner;
  }

  @Produces
  @Singleton
  PlacementDecider decider() {
    return new PlacementDecider(ledger, policies::current, learner, nodes::node);
  }

  /** Choices in flight: held on the leader only, dropped the moment it stops leading. */
  @Produces
  @Singleton
  ChoicesInFlight choicesInFlight(PlacementDecider decider) {
    gate.onChange(() -> {
      if (!gate.leading()) {
        ledger.releaseChoices();
      }
    });
    Gauge.builder("gpu_admission_placement_choices_in_flight", ledger, GpuLedger::choicesHeld)
        .description("Nodes held for pods kube-scheduler has chosen them for and not bound yet (the leader's; 0 on other replicas)")
        .register(meters);
    return new ChoicesInFlight(
        ledger, decider, gate, podFacts, Clock.systemUTC(), config.choiceTimeout(), uid -> podFacts.facts(uid).isPresent());
  }

  @Produces
  @Singleton
  GangPlanning gangPlanning(PlacementDecider decider, QuotaGate quotas) {
    return new GangPlanning(decider, ledger, nodes::list, gangs).withQuota(new GangQuotaCheck(quotas));
  }

  @Produces
  @Singleton
  GangGate gangGate(GangPlanning planning) {
    return new GangGate(gangs, planning, policies::current, config.gangPlanTimeout());
  }

  @Produces
  @Singleton
  GangRegistry gangRegistry() {
    return gangs;
  }

  /** Also the {@link io.gpuadmission.placement.Nominations} filter and bind hold GPUs for. */
  @Produces
  @Singleton
  PodFactsIndex podFacts() {
    return podFacts;
  }

  /** The PodDisruptionBudgets the one watcher keeps, which preemption and quota reclaim both weigh. */
  @Produces
  @Singleton
  DisruptionBudgets disruptionBudgets() {
    return budgets;
  }

  @Produces
  @Singleton
  GpuPreemptor preemptor(PlacementDecider decider, VictimQuota quota) {
    var search = new PreemptionSearch(ledger, podFacts, decider, budgets, quota);
    return new GpuPreemptor(
        cluster.client(), search, decider, ledger, podFacts, gate, policies::current, Clock.systemUTC(),
        new GpuPreemptor.Timing(config.preemptionDelay(), config.assumeTimeout()), new PreemptionMetrics(meters));
  }

  @Produces
  @Singleton
  CandidateReview candidateReview(PlacementDecider decider, GpuPreemptor preemptor, VictimQuota quota) {
    return new CandidateReview(new PreemptionSearch(ledger, podFacts, decider, budgets, quota), preemptor, policies::current);
  }

  @Produces
  @Singleton
  PodBinder binder(PlacementDecider decider) {
    var binder = new PodBinder(cluster.client(), ledger, decider, gate, policies::current, Clock.systemUTC(), config.assumeTimeout());
    binder.respect(podFacts);
    return binder;
  }

  void start(
      @Observes ServerStartup event, PodBinder binder, GangPlanning planning, GpuPreemptor preemptor, PlacementDecider decider,
      QuotaReclaimer reclaimer, QuotaGate quotas, QuotaTreeStore trees) {
    expiry = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "placement-expiry"));
    expiry.scheduleWithFixedDelay(() -> ledger.expire(Clock.systemUTC().instant()), 1, 1, TimeUnit.SECONDS);
    if (!cluster.available()) {
      return;
    }
    // Pods kube-scheduler could not place without asking the extender, and tree changes it cannot see.
    reclaimSweep = new QuotaReclaimSweep(() -> watcher.gpuPods(), reclaimer, quotas, decider, ledger, podFacts, policies::current, gate,
        new PodRequeue(cluster.client(), Clock.systemUTC()), reclaimSweepPeriod, Clock.systemUTC());
    watcher =
        new LedgerWatcher(cluster.client(), ledger, policies::current)
            .alsoTell(podFacts::current, podFacts::gone)
            .alsoTell(gangs::current, gangs::gone)
            .alsoTell(overrides::observe, overrides::gone)
            .alsoTell(pod -> learner.observe(pod, policies.current()), pod -> learner.gone(pod, policies.current()))
            .alsoTell(reclaimSweep::pod, pod -> {})
            .start(nodes);
    reclaimSweep.start();
    trees.onChange(reclaimSweep::treeChanged);
    policies.onChangeOf(p -> p.quotas().enabled(), p -> reclaimSweep.treeChanged());
    budgetWatcher = new DisruptionBudgetWatcher(cluster.client(), budgets::current, budgets::gone).start();
    // Another job or replica label makes other pods gang members: read them all again.
    policies.onChangeOf(p -> List.of(p.topology().jobLabel(), p.topology().replicaLabel()), policy -> {
      podFacts.replaceAll(watcher::gpuPods);
      gangs.replaceAll(watcher::gpuPods);
    });
    coordinator =
        new GangCoordinator(
                cluster.client(),
                gangs,
                planning,
                ledger,
                gate,
                Clock.systemUTC(),
                new GangCoordinator.Timing(config.gangPlanTimeout(), config.assumeTimeout()),
                new GangEvents(cluster.client(), Clock.systemUTC()),
                new GangMetrics(meters))
            .preemptWith(new GangPreemptor(cluster.client(), preemptor, planning, ledger, podFacts, new PreemptionMetrics(meters)))
            .start();
    binder.onBound(coordinator::memberBound);
    binder.respectQuota((namespace, uid, ask) -> quotas.refusal(namespace, uid, ask).map(io.gpuadmission.quota.QuotaDecision.Refused::reason));
    policies.onChangeOf(GpuPolicy::nodeLabels, policy -> watcher.remapNodes());
    // The leader-only Service kube-scheduler calls selects the Lease holder's pod by this label.
    leaderLabel = new LeaderPodLabel(cluster.client(), namespace.name(), gate, config.retryPeriod()).start();
    leadership =
        new PlacementLeadership(cluster.client(), ledger, gate, policies::current)
            .start(
                namespace.name(),
                config.leaseName(),
                new PlacementLeadership.Timing(config.leaseDuration(), config.renewDeadline(), config.retryPeriod()));
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event, GpuPreemptor preemptor) {
    preemptor.close();
    if (reclaimSweep != null) {
      reclaimSweep.close();
    }
    if (coordinator != null) {
      coordinator.close();
    }
    if (leadership != null) {
      leadership.close();
    }
    if (leaderLabel != null) {
      leaderLabel.close();
    }
    if (watcher != null) {
      watcher.close();
    }
    if (budgetWatcher != null) {
      budgetWatcher.close();
    }
    if (expiry != null) {
      expiry.shutdownNow();
    }
  }

  /**
   * The host name and this process' id: two replicas started on one machine (the README's way, each
   * on its own port) must not share an identity, or both would hold the one Lease.
   */
  private static String hostName() {
    var pid = ProcessHandle.current().pid();
    try {
      return java.net.InetAddress.getLocalHost().getHostName() + "-" + pid;
    } catch (java.net.UnknownHostException e) {
      return "gpu-admission-" + pid;
    }
  }
}
