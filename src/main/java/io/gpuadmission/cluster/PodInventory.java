package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.policy.PolicyStore;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.List;
import java.util.Map;

/**
 * Pods that belong to topology jobs (those carrying the job label), indexed by namespace and
 * label value, from a fabric8 informer limited to that label.
 */
@ApplicationScoped
public class PodInventory {
  static final String GANG_INDEX = "gang";

  private final ClusterConnection cluster;
  private final PolicyStore policies;
  private volatile SharedIndexInformer<Pod> informer;

  public PodInventory(ClusterConnection cluster, PolicyStore policies) {
    this.cluster = cluster;
    this.policies = policies;
  }

  void start(@Observes StartupEvent event) {
    if (!cluster.available()) {
      return;
    }
    var label = policies.current().topology().jobLabel();
    informer = cluster.client().pods().inAnyNamespace().withLabel(label).runnableInformer(0);
    informer.addIndexers(
        Map.of(
            GANG_INDEX,
            pod -> {
              var value = pod.getMetadata().getLabels() == null ? null : pod.getMetadata().getLabels().get(label);
              return value == null ? List.of() : List.of(pod.getMetadata().getNamespace() + "/" + value);
            }));
    Informers.start(informer, "pod");
  }

  void stop(@Observes ShutdownEvent event) {
    Informers.stop(informer);
  }

  public boolean synced() {
    return informer != null && informer.hasSynced();
  }

  /** Live pods (not finished, not being deleted) of a gang. */
  public List<Pod> gangPods(String namespace, String label) {
    if (informer == null) {
      return List.of();
    }
    return informer.getIndexer().byIndex(GANG_INDEX, namespace + "/" + label).stream()
        .filter(PodInventory::live)
        .toList();
  }

  private static boolean live(Pod pod) {
    var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return pod.getMetadata().getDeletionTimestamp() == null && !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }
}
