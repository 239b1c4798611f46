package io.gpuadmission.teamquota;

import io.gpuadmission.cluster.ClusterConnection;
import io.gpuadmission.cluster.QuotaTreeStore;
import io.gpuadmission.cluster.QuotaTreeWatcher;
import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.preemption.DisruptionBudgets;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.preemption.VictimQuota;
import io.gpuadmission.quota.QuotaBook;
import io.gpuadmission.quota.QuotaTree;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Team quotas in the service: the gate filter and gang planning ask, the reclaimer, the inspection
 * and the metrics, all over the tree in force ({@link QuotaTreeStore}) and the ledger.
 */
@ApplicationScoped
public class QuotaService {
  private final QuotaTreeStore store;
  private final PolicyStore policies;
  private final QuotaLedgerBook books;
  private final QuotaGate gate;
  private final QuotaReclaimer reclaimer;
  private final QuotaMetrics metrics;

  public QuotaService(
      QuotaTreeStore store,
      PolicyStore policies,
      GpuLedger ledger,
      PodFactsIndex facts,
      PlacementDecider decider,
      DisruptionBudgets budgets,
      LeaderGate leader,
      ClusterConnection cluster,
      MeterRegistry meters,
      @ConfigProperty(name = "gpu-admission.quotas.reclaim-cool-down", defaultValue = "30s") Duration coolDown) {
    this.store = store;
    this.policies = policies;
    this.books = new QuotaLedgerBook(ledger, policies::current, facts);
    this.gate = new QuotaGate(store::tree, policies::current, books);
    this.reclaimer = new QuotaReclaimer(
        gate, books, ledger, facts, decider, budgets, leader, cluster.available() ? new QuotaEvictions(cluster.client(), Clock.systemUTC()) : null,
        Clock.systemUTC(), coolDown, reclaimCounts(meters));
    this.metrics = new QuotaMetrics(meters, this, store);
  }

  private static QuotaReclaimer.Counts reclaimCounts(MeterRegistry meters) {
    var reclaims = Counter.builder("gpu_admission_quota_reclaims")
        .description("Reclaims the placement leader made for pods of quota leaves under their min").register(meters);
    var victims = Counter.builder("gpu_admission_quota_reclaim_victims")
        .description("Pods of borrowing quota leaves the placement leader evicted to give a leaf under its min its GPUs back").register(meters);
    return evicted -> {
      reclaims.increment();
      victims.increment(evicted);
    };
  }

  void start(@Observes ServerStartup event) {
    store.onChange(metrics::refresh);
    policies.onChangeOf(p -> p.quotas().enabled(), p -> metrics.refresh());
    metrics.refresh();
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    reclaimer.close();
  }

  @Produces
  @Singleton
  QuotaGate gate() {
    return gate;
  }

  /** What priority preemption (kube-scheduler's, through the preempt verb, and the extender's own) may take. */
  @Produces
  @Singleton
  VictimQuota victimQuota() {
    return new QuotaPreemptionCheck(gate, books, reclaimer);
  }

  @Produces
  @Singleton
  QuotaReclaimer reclaimer() {
    return reclaimer;
  }

  QuotaBook book(QuotaTree tree) {
    return books.book(tree);
  }

  /** Every quota node with its min, max, used and borrowed now. */
  public QuotaInspection inspection() {
    var enabled = policies.current().quotas().enabled();
    var off = off();
    var error = store.lastError().orElse("");
    var tree = store.tree();
    return tree.isEmpty()
        ? QuotaInspection.none(enabled, off, error)
        : QuotaInspection.of(enabled, off, store.source(), error, tree.get(), books.book(tree.get()));
  }

  /**
   * Why no team quota is enforced now: the policy turns them off, the cluster does not serve
   * ElasticQuotaTree (no CRD), or its tree breaks a rule and no good one was read before. Empty
   * when they are on (with a tree, or none yet: then nothing is limited).
   */
  public String off() {
    if (!policies.current().quotas().enabled()) {
      return "policy quotas.enabled is false";
    }
    var error = store.lastError();
    if (store.tree().isEmpty() && error.isPresent()) {
      return "the ElasticQuotaTree breaks the tree's rules and " + QuotaTreeWatcher.NO_GOOD_TREE + ": " + error.get();
    }
    return store.notServed();
  }
}
