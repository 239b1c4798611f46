package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.quota.QuotaRuleViolation;
import io.gpuadmission.quota.QuotaTreeCheck;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Keeps the team quota tree in force equal to the ElasticQuotaTree in {@code kube-system} (ACK's
 * capacity scheduling): an informer on that namespace's trees, the tree checked against ACK's rules
 * on each change, none once it is deleted, and the last good tree when it breaks a rule (a log
 * line, an Event and a metric, as for the policy; none, and the reason in health, when this replica
 * never read a good one). The cluster has one tree; of several, the first
 * by name counts. Without the CRD ({@link OptionalResource}) no quota applies, the store says why,
 * and the informer starts once the CRD is installed.
 */
@ApplicationScoped
public class QuotaTreeWatcher {
  public static final String GROUP = "scheduling.sigs.k8s.io";
  public static final String VERSION = "v1beta1";
  public static final String API_VERSION = GROUP + "/" + VERSION;
  public static final String PLURAL = "elasticquotatrees";
  public static final String KIND = "ElasticQuotaTree";
  public static final String NAMESPACE = "kube-system";
  private static final Logger LOG = Logger.getLogger(QuotaTreeWatcher.class);

  /** The resource, named in full: its informer needs no discovery of its own. */
  public static final ResourceDefinitionContext TREES = new ResourceDefinitionContext.Builder().withGroup(GROUP).withVersion(VERSION)
      .withKind(KIND).withPlural(PLURAL).withNamespaced(true).build();

  private final ClusterConnection cluster;
  private final QuotaTreeStore store;
  private final Duration recheck;
  private volatile OptionalResource served;

  public QuotaTreeWatcher(
      ClusterConnection cluster, QuotaTreeStore store,
      @ConfigProperty(name = "gpu-admission.cluster.optional-api-recheck", defaultValue = "5s") Duration recheck) {
    this.cluster = cluster;
    this.store = store;
    this.recheck = recheck;
  }

  void start(@Observes ServerStartup event) {
    if (!cluster.available()) {
      return;
    }
    served = new OptionalResource(cluster.client(), TREES, NAMESPACE, KIND, recheck, informer -> {
      informer.addEventHandler(Informers.handler(tree -> reload(informer), tree -> reload(informer)));
      store.clear(); // served now: no tree until the informer lists one
    }, store::notServed);
    served.start();
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (served != null) {
      served.close();
    }
  }

  /** Loads the first tree by name of {@code informer}'s, or clears the tree in force when there is none. */
  synchronized void reload(SharedIndexInformer<GenericKubernetesResource> informer) {
    if (served == null || served.informer() != informer) {
      return; // an informer stopped since (the CRD deleted): the store says why there is no tree
    }
    var trees = informer.getStore().list().stream().sorted(Comparator.comparing(t -> t.getMetadata().getName())).toList();
    if (trees.isEmpty()) {
      if (store.tree().isPresent()) {
        LOG.infof("ElasticQuotaTree deleted: no team quota applies");
      }
      store.clear();
      return;
    }
    if (trees.size() > 1) {
      LOG.warnf("%d ElasticQuotaTrees in %s: only %s counts (a cluster has one tree)", trees.size(), NAMESPACE, name(trees.get(0)));
    }
    load(trees.get(0));
  }

  private void load(GenericKubernetesResource object) {
    var checked = check(object);
    if (checked instanceof QuotaTreeCheck.Valid valid) {
      var before = store.tree();
      store.replace(valid.tree(), NAMESPACE + "/" + name(object));
      if (before.isEmpty() || !before.get().root().spec().equals(valid.tree().root().spec())) {
        LOG.infof("team quota tree %s/%s in force", NAMESPACE, name(object));
      }
      return;
    }
    var reason = describe(((QuotaTreeCheck.Invalid) checked).violations());
    store.failed(reason);
    // A replica that starts (or sees the CRD appear) with the tree already broken never read a good one: it says so.
    var kept = store.tree().isPresent() ? "the previous one stays in force" : NO_GOOD_TREE;
    LOG.errorf("ElasticQuotaTree %s/%s breaks the tree's rules: quota tree not loaded, %s: %s", NAMESPACE, name(object), kept, reason);
    publishEvent(object, "quota tree not loaded, " + kept + ": " + reason);
  }

  /** What applies when the tree breaks a rule and no good tree was read before. */
  public static final String NO_GOOD_TREE = "no good tree was read before it, so no team quota applies until it is fixed";

  /** The tree of {@code object}, checked: read, then the tree's rules. */
  public static QuotaTreeCheck check(GenericKubernetesResource object) {
    return QuotaTreeReading.check(Serialization.jsonMapper().valueToTree(object));
  }

  /** {@code spec.root.children[0].min.nvidia.com/gpu (team-a): ...; ...} */
  public static String describe(List<QuotaRuleViolation> violations) {
    return violations.stream()
        .map(v -> v.quota().isEmpty() ? v.path() + ": " + v.rule() : v.message())
        .collect(Collectors.joining("; "));
  }

  private void publishEvent(GenericKubernetesResource object, String message) {
    var about = new ObjectReferenceBuilder().withApiVersion(API_VERSION).withKind(KIND).withName(name(object))
        .withNamespace(NAMESPACE).withUid(object.getMetadata().getUid())
        .withResourceVersion(object.getMetadata().getResourceVersion()).build();
    try {
      ClusterEvents.publish(cluster.client(), Instant.now(), about, "Warning", "InvalidQuotaTree", message);
    } catch (RuntimeException e) {
      LOG.warnf("could not publish an Event for the invalid quota tree: %s", e.getMessage());
    }
  }

  private static String name(GenericKubernetesResource object) {
    return object.getMetadata().getName();
  }
}
