package io.gpuadmission.cluster;

import io.gpuadmission.mode.ServerStartup;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.util.Map;
import java.util.Optional;

/** Namespaces and their labels (Pod Security levels), from a fabric8 informer. */
@ApplicationScoped
public class NamespaceInventory {
  private final ClusterConnection cluster;
  private volatile SharedIndexInformer<Namespace> informer;

  public NamespaceInventory(ClusterConnection cluster) {
    this.cluster = cluster;
  }

  void start(@Observes ServerStartup event) {
    if (!cluster.available()) {
      return;
    }
    informer = cluster.client().namespaces().withLimit(BoundPods.PAGE).runnableInformer(0);
    Informers.start(informer, "namespace");
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    Informers.stop(informer);
  }

  public boolean synced() {
    return informer != null && informer.hasSynced();
  }

  /** The UID of {@code namespace}, once the informer has it. */
  public Optional<String> uid(String namespace) {
    var ns = informer == null ? null : informer.getStore().getByKey(namespace);
    return ns == null ? Optional.empty() : Optional.ofNullable(ns.getMetadata().getUid());
  }

  public Optional<Map<String, String>> labels(String namespace) {
    if (informer == null) {
      return Optional.empty();
    }
    var ns = informer.getStore().getByKey(namespace);
    return ns == null
        ? Optional.empty()
        : Optional.of(ns.getMetadata().getLabels() == null ? Map.of() : ns.getMetadata().getLabels());
  }
}
