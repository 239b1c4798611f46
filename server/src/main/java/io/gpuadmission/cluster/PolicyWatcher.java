package io.gpuadmission.cluster;

import io.gpuadmission.mode.ServerStartup;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.policy.InvalidPolicyException;
import io.gpuadmission.policy.PolicyConfig;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.policy.PolicyStatus;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.policy.PolicyStore.PolicySource;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.time.Instant;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Keeps the policy in force equal to the policy ConfigMap: an informer on that one ConfigMap (so
 * RBAC can name it), a whole new policy on each change, the built-in default when it is deleted,
 * and the last good policy when it is invalid (with a log line, an Event and a metric).
 */
@ApplicationScoped
public class PolicyWatcher {
  private static final Logger LOG = Logger.getLogger(PolicyWatcher.class);

  private final ClusterConnection cluster;
  private final PolicyConfig config;
  private final WebhookNamespace namespace;
  private final PolicyStore store;
  private final PolicyStatus status;
  private volatile SharedIndexInformer<ConfigMap> informer;
  /** The resourceVersion of the ConfigMap last loaded (valid or not). */
  private volatile String loadedVersion;

  public PolicyWatcher(
      ClusterConnection cluster, PolicyConfig config, WebhookNamespace namespace, PolicyStore store, PolicyStatus status) {
    this.cluster = cluster;
    this.config = config;
    this.namespace = namespace;
    this.store = store;
    this.status = status;
  }

  void start(@Observes ServerStartup event) {
    if (!cluster.available()) {
      LOG.info("no cluster configured: serving the built-in default policy");
      return;
    }
    // Until the ConfigMap has been read (or found absent), the built-in default is not the cluster's policy.
    store.awaitRead(this::unread);
    informer =
        cluster.client().configMaps().inNamespace(namespace.name()).withName(config.configMapName()).runnableInformer(0);
    informer.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(ConfigMap configMap) {
            load(configMap);
          }

          @Override
          public void onUpdate(ConfigMap oldMap, ConfigMap newMap) {
            if (!newMap.getMetadata().getResourceVersion().equals(oldMap.getMetadata().getResourceVersion())) {
              load(newMap);
            }
          }

          @Override
          public void onDelete(ConfigMap configMap, boolean finalStateUnknown) {
            var active = store.replace(PolicyParser.builtInDefault(), PolicySource.DEFAULT);
            status.succeeded();
            LOG.infof("policy ConfigMap %s deleted: built-in default in force (generation %d)", where(), active.generation());
          }
        });
    Informers.start(informer, "policy ConfigMap");
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    Informers.stop(informer);
  }

  /**
   * Empty once the informer has listed and its ConfigMap (if there is one) has been loaded: the
   * informer tells its handlers after it has synced, so a synced informer is not enough.
   */
  Optional<String> unread() {
    var current = informer;
    if (current == null || !current.hasSynced()) {
      var failure = current == null ? "" : Informers.lastFailure(current);
      return Optional.of("the policy ConfigMap " + where() + " has not been read from the API server yet"
          + (failure.isEmpty() ? "" : " (last attempt: " + failure + ")"));
    }
    var listed = current.getStore().list();
    if (listed.isEmpty()) {
      return Optional.empty();
    }
    var version = listed.get(0).getMetadata().getResourceVersion();
    return version != null && version.equals(loadedVersion)
        ? Optional.empty()
        : Optional.of("the policy ConfigMap " + where() + " is being loaded");
  }

  void load(ConfigMap configMap) {
    try {
      parseAndApply(configMap);
    } finally {
      loadedVersion = configMap.getMetadata().getResourceVersion();
    }
  }

  private void parseAndApply(ConfigMap configMap) {
    var text = configMap.getData() == null ? null : configMap.getData().get(config.key());
    try {
      if (text == null) {
        throw new InvalidPolicyException(
            java.util.List.of(new io.gpuadmission.policy.PolicyError("", 0, "the ConfigMap has no key " + config.key())));
      }
      var active = store.replace(PolicyParser.parse(text), PolicySource.CONFIGMAP);
      status.succeeded();
      LOG.infof("policy from ConfigMap %s in force (generation %d)", where(), active.generation());
    } catch (InvalidPolicyException e) {
      var reason = e.getMessage().replace('\n', ';');
      status.failed(reason);
      LOG.errorf("policy ConfigMap %s is invalid, keeping the policy in force: %s", where(), reason);
      publishEvent(configMap, e.getMessage());
    }
  }

  private void publishEvent(ConfigMap configMap, String message) {
    var about = new ObjectReferenceBuilder().withApiVersion("v1").withKind("ConfigMap").withName(configMap.getMetadata().getName())
        .withNamespace(namespace.name()).withUid(configMap.getMetadata().getUid())
        .withResourceVersion(configMap.getMetadata().getResourceVersion()).build();
    try {
      ClusterEvents.publish(cluster.client(), Instant.now(), about, "Warning", "InvalidPolicy",
          "policy not loaded, the previous one stays in force: " + truncate(message));
    } catch (RuntimeException e) {
      LOG.warnf("could not publish an Event for the invalid policy: %s", e.getMessage());
    }
  }

  private static String truncate(String message) {
    return message.length() <= 900 ? message : message.substring(0, 897) + "...";
  }

  private String where() {
    return namespace.name() + "/" + config.configMapName();
  }
}
