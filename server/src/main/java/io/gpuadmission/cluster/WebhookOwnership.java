package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.mode.ServerStartup;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Makes the service's Namespace the owner of its two webhook configurations, so that deleting the
 * namespace (a failed {@code helm uninstall} cleaned up by hand, {@code kubectl delete namespace})
 * deletes them too, by the garbage collector: left behind, they would send every GPU pod of the
 * cluster to a Service that is gone, and GPU pods fail closed. Only a configuration whose webhooks
 * all call a Service in this namespace is this install's; the owner reference is added beside any
 * other owner, and checked again every {@code resync}, since a re-apply that replaced the object
 * would drop it (a patch that finds the object changed since it was read waits for the next one).
 */
@ApplicationScoped
public class WebhookOwnership {
  private static final Logger LOG = Logger.getLogger(WebhookOwnership.class);
  private static final int ATTEMPTS = 3;
  private static final Duration SOON = Duration.ofSeconds(2);

  private final ClusterConnection cluster;
  private final WebhookNamespace namespace;
  private final NamespaceInventory namespaces;
  private final String configurationName;
  private final Duration resync;
  private ScheduledExecutorService timer;
  private volatile String lastProblem = "";

  public WebhookOwnership(
      ClusterConnection cluster,
      WebhookNamespace namespace,
      NamespaceInventory namespaces,
      @ConfigProperty(name = "gpu-admission.webhook.configuration-name", defaultValue = "gpu-admission") String configurationName,
      @ConfigProperty(name = "gpu-admission.webhook.owner-resync", defaultValue = "5m") Duration resync) {
    this.cluster = cluster;
    this.namespace = namespace;
    this.namespaces = namespaces;
    this.configurationName = configurationName;
    this.resync = resync;
  }

  void start(@Observes ServerStartup event) {
    if (!cluster.available()) {
      return;
    }
    timer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "webhook-ownership"));
    after(SOON);
  }

  /** Every {@code resync} once both are owned; every {@link #SOON} until then (the namespace informer still listing, the API server away). */
  private void syncAndReschedule() {
    after(sync() ? resync : SOON);
  }

  private void after(Duration delay) {
    try {
      timer.schedule(this::syncAndReschedule, delay.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException closed) {
      // shutting down
    }
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (timer != null) {
      timer.shutdownNow();
    }
  }

  /** Adds the owner reference where it is missing; says a problem once. True when nothing is left to do for now. */
  boolean sync() {
    var uid = namespaces.uid(namespace.name());
    if (uid.isEmpty()) {
      return false; // the namespace informer has not listed it yet
    }
    var owner = new OwnerReferenceBuilder().withApiVersion("v1").withKind("Namespace").withName(namespace.name()).withUid(uid.get()).build();
    var admission = cluster.client().admissionRegistration().v1();
    try {
      own(owner, () -> admission.mutatingWebhookConfigurations().withName(configurationName).get(),
          patch -> admission.mutatingWebhookConfigurations().withName(configurationName).patch(PatchContext.of(PatchType.JSON), patch));
      own(owner, () -> admission.validatingWebhookConfigurations().withName(configurationName).get(),
          patch -> admission.validatingWebhookConfigurations().withName(configurationName).patch(PatchContext.of(PatchType.JSON), patch));
      lastProblem = "";
      return true;
    } catch (KubernetesClientException e) {
      var refused = e.getCode() == 403; // asking every few seconds would not change that
      var problem = String.format(
          "could not make namespace %s the owner of webhook configurations %s (%d: %s): deleting the namespace would leave them behind;"
              + " trying again in %s", namespace.name(), configurationName, e.getCode(),
          e.getStatus() != null ? e.getStatus().getMessage() : e.getMessage(), refused ? resync : SOON);
      if (!problem.equals(lastProblem)) {
        lastProblem = problem;
        LOG.warn(problem);
      }
      return refused;
    }
  }

  /**
   * Reads the configuration and adds the owner when it is this install's and lacks it. The patch
   * adds to the owners there are, if the object is still the one read (its resourceVersion, digits,
   * which kube-apiserver's byte-wise {@code test} compares as read); one changed in between (the CA
   * written into it at start) is read again.
   */
  private void own(OwnerReference owner, Supplier<HasMetadata> read, Consumer<String> patch) {
    for (int attempt = 1; ; attempt++) {
      var configuration = read.get();
      if (configuration == null || !callsOnly(configuration, namespace.name()) || owned(configuration, owner)) {
        return;
      }
      var reference = Map.of("apiVersion", owner.getApiVersion(), "kind", owner.getKind(), "name", owner.getName(), "uid", owner.getUid());
      var meta = configuration.getMetadata();
      var add = meta.getOwnerReferences() == null || meta.getOwnerReferences().isEmpty()
          ? Map.of("op", "add", "path", "/metadata/ownerReferences", "value", List.of(reference))
          : Map.of("op", "add", "path", "/metadata/ownerReferences/-", "value", reference);
      try {
        patch.accept(cluster.client().getKubernetesSerialization().asJson(
            List.of(Map.of("op", "test", "path", "/metadata/resourceVersion", "value", meta.getResourceVersion()), add)));
      } catch (KubernetesClientException e) {
        if ((e.getCode() == 409 || e.getCode() == 422) && attempt < ATTEMPTS) {
          continue; // changed since read
        }
        throw e;
      }
      LOG.infof("%s %s is owned by namespace %s now: deleting the namespace deletes it", configuration.getKind(), configurationName,
          namespace.name());
      return;
    }
  }

  private static boolean owned(HasMetadata configuration, OwnerReference owner) {
    return Optional.ofNullable(configuration.getMetadata().getOwnerReferences()).orElse(List.of()).stream()
        .anyMatch(o -> Objects.equals(o.getUid(), owner.getUid()));
  }

  /** Whether every webhook of {@code configuration} calls a Service in {@code namespace}: this install's. */
  static boolean callsOnly(HasMetadata configuration, String namespace) {
    List<String> called;
    if (configuration instanceof MutatingWebhookConfiguration m && m.getWebhooks() != null) {
      called = m.getWebhooks().stream().map(w -> w.getClientConfig() == null || w.getClientConfig().getService() == null
          ? "" : w.getClientConfig().getService().getNamespace()).toList();
    } else if (configuration instanceof ValidatingWebhookConfiguration v && v.getWebhooks() != null) {
      called = v.getWebhooks().stream().map(w -> w.getClientConfig() == null || w.getClientConfig().getService() == null
          ? "" : w.getClientConfig().getService().getNamespace()).toList();
    } else {
      return false;
    }
    return !called.isEmpty() && called.stream().allMatch(namespace::equals);
  }
}
