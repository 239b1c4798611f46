package io.gpuadmission.tls;

import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.cluster.ClusterConnection;
import io.gpuadmission.cluster.WebhookNamespace;
import io.gpuadmission.metrics.Meters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The install without cert-manager: keeps the Secret's certificate current, serves it, and writes
 * its CA into the webhook configurations, once at start and then every sync period. Until the first
 * sync succeeds the replica is not ready (it serves a throwaway certificate nobody trusts). Nothing
 * is written to disk: the key reaches the listener in memory.
 */
@ApplicationScoped
public class SelfManagedCertificates {
  private static final Logger LOG = Logger.getLogger(SelfManagedCertificates.class);
  private static final Duration RETRY = Duration.ofSeconds(5);

  private final CertificateConfig config;
  private final ClusterConnection cluster;
  private final WebhookNamespace namespace;
  private final ServedCertificate served;
  private final TrustedCallers callers;
  private final CallerAuthConfig callerConfig;
  private ScheduledExecutorService timer;
  private Counter failures;
  private volatile boolean installed;
  private volatile double caSwitch = Double.NaN;
  private volatile String status = "waiting for the first certificate sync";

  public SelfManagedCertificates(
      CertificateConfig config,
      ClusterConnection cluster,
      WebhookNamespace namespace,
      ServedCertificate served,
      TrustedCallers callers,
      CallerAuthConfig callerConfig) {
    this.callers = callers;
    this.callerConfig = callerConfig;
    this.config = config;
    this.cluster = cluster;
    this.namespace = namespace;
    this.served = served;
  }

  void start(@Observes ServerStartup event, MeterRegistry meters) {
    // Registered either way so that dashboards and alerts find the series (0 with cert-manager).
    failures =
        Counter.builder("gpu_admission_certificate_sync_failures")
            .description("Self-managed certificate syncs (Secret or caBundle) that failed")
            .register(meters);
    Meters.forget(meters, "gpu_admission_certificate_ca_switch_timestamp");
    Gauge.builder("gpu_admission_certificate_ca_switch_timestamp", this, c -> c.caSwitch)
        .description("When the new CA that joined the trusted CAs starts signing the serving certificate (Unix time); NaN when no CA change is under way")
        .baseUnit("seconds")
        .strongReference(true)
        .register(meters);
    if (!config.selfManaged()) {
      return;
    }
    if (!cluster.available()) {
      status = "gpu-admission.tls.self-managed is on but there is no cluster to keep the Secret in";
      LOG.error(status);
      return;
    }
    var store =
        new CertificateSecretStore(cluster.client(), namespace.name(), config, Clock.systemUTC());
    var injector =
        new CaBundleInjector(
            cluster.client(),
            config.webhookConfigurationName(),
            namespace.name(),
            config.serviceName());
    var schedulerClient =
        new SchedulerClientSecretStore(cluster.client(), namespace.name(), callerConfig, Clock.systemUTC());
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> ServedCertificate.daemon(r, "certificate-sync"));
    timer.execute(() -> syncAndReschedule(store, injector, schedulerClient));
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (timer != null) {
      timer.shutdownNow();
    }
  }

  /** True unless self-managed and no certificate from the Secret is served yet. */
  public boolean ready() {
    return !config.selfManaged() || installed;
  }

  public String status() {
    return status;
  }

  /** Apart from the serving certificate: a failure here must not keep the webhook from being ready. */
  private void syncSchedulerClient(SchedulerClientSecretStore schedulerClient, CertificateBundle serving) {
    try {
      schedulerClient.sync(serving);
    } catch (GeneralSecurityException | RuntimeException e) {
      failures.increment();
      LOG.warnf("could not keep kube-scheduler's client certificate in Secret %s: %s", callerConfig.secretName(), e.getMessage());
    }
  }

  private void syncAndReschedule(
      CertificateSecretStore store, CaBundleInjector injector, SchedulerClientSecretStore schedulerClient) {
    var next = config.syncPeriod();
    try {
      var outcome = store.sync();
      caSwitch = store.caSwitch(outcome.bundle()).map(at -> (double) at.getEpochSecond()).orElse(Double.NaN);
      served.install(outcome.bundle());
      if (callers.followsSecret()) {
        // Every CA in ca.crt: during a CA change the next CA is trusted before it signs anything.
        callers.trust(outcome.bundle().caCertificates());
      }
      syncSchedulerClient(schedulerClient, outcome.bundle());
      var injection = injector.inject(outcome.bundle().caPem());
      installed = true;
      var expires = outcome.bundle().certificate().getNotAfter().toInstant();
      status =
          "serving the certificate of Secret " + config.secretName() + " (expires " + expires + ")";
      if (outcome.action() != CertificateSecretStore.Action.UNCHANGED
          || injection.changedWebhooks() > 0) {
        LOG.infof(
            "certificate %s: %s; caBundle written into %d webhooks",
            outcome.action().name().toLowerCase(java.util.Locale.ROOT),
            status,
            injection.changedWebhooks());
      }
      if (injection.missingConfigurations() > 0) {
        // kubectl apply creates the webhook configurations after the Deployment: look again soon.
        next = RETRY.compareTo(next) < 0 ? RETRY : next;
      }
    } catch (GeneralSecurityException | RuntimeException e) {
      failures.increment();
      status =
          "certificate sync failed, retrying in " + RETRY.toSeconds() + " s: " + e.getMessage();
      LOG.warn(status);
      next = RETRY.compareTo(next) < 0 ? RETRY : next;
    }
    if (!timer.isShutdown()) {
      timer.schedule(
          () -> syncAndReschedule(store, injector, schedulerClient), next.toMillis(), TimeUnit.MILLISECONDS);
    }
  }
}
