package io.gpuadmission.cluster;

import io.gpuadmission.mode.ServerStartup;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.policy.PolicyStore;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jboss.logging.Logger;

/**
 * Pods that belong to topology jobs (those carrying the policy's job label), indexed by namespace
 * and label value, from a fabric8 informer limited to that label. When a policy reload names
 * another job label, the informer is replaced by one for the new label.
 */
@ApplicationScoped
public class PodInventory {
  static final String GANG_INDEX = "gang";
  private static final Logger LOG = Logger.getLogger(PodInventory.class);

  /** Told of every gang pod the informer shows, created, changed or deleted. */
  public interface GangPodListener {
    void seen(String namespace, String label, String podName);
  }

  private record Watch(String jobLabel, SharedIndexInformer<Pod> informer) {}

  private final ClusterConnection cluster;
  private final PolicyStore policies;
  private final List<GangPodListener> listeners = new CopyOnWriteArrayList<>();
  private volatile Watch watch;

  public PodInventory(ClusterConnection cluster, PolicyStore policies) {
    this.cluster = cluster;
    this.policies = policies;
  }

  void start(@Observes ServerStartup event) {
    if (!cluster.available()) {
      return;
    }
    policies.onChangeOf(p -> p.topology().jobLabel(), p -> watchLabel(p.topology().jobLabel()));
    watchLabel(policies.current().topology().jobLabel());
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    var current = watch;
    if (current != null) {
      Informers.stop(current.informer());
    }
  }

  public void onGangPod(GangPodListener listener) {
    listeners.add(listener);
  }

  private synchronized void watchLabel(String label) {
    var previous = watch;
    if (previous != null && previous.jobLabel().equals(label)) {
      return;
    }
    var informer = cluster.client().pods().inAnyNamespace().withLabel(label).withLimit(BoundPods.PAGE).runnableInformer(0);
    informer.addIndexers(Map.of(GANG_INDEX, pod -> gangValue(pod, label).map(v -> List.of(pod.getMetadata().getNamespace() + "/" + v)).orElse(List.of())));
    informer.addEventHandler(new Notifier(label));
    watch = new Watch(label, informer);
    Informers.start(informer, "pod (" + label + ")");
    if (previous != null) {
      LOG.infof("policy job label is now %s (was %s): gang pods are read by the new label", label, previous.jobLabel());
      Informers.stop(previous.informer());
    }
  }

  static Optional<String> gangValue(Pod pod, String label) {
    var labels = pod.getMetadata().getLabels();
    return Optional.ofNullable(labels == null ? null : labels.get(label));
  }

  /** Tells the listeners of each pod event, so the recent-admissions ledger defers to the informer. */
  private final class Notifier implements ResourceEventHandler<Pod> {
    private final String label;

    Notifier(String label) {
      this.label = label;
    }

    @Override
    public void onAdd(Pod pod) {
      tell(pod);
    }

    @Override
    public void onUpdate(Pod before, Pod after) {
      tell(after);
    }

    @Override
    public void onDelete(Pod pod, boolean finalStateUnknown) {
      tell(pod);
    }

    private void tell(Pod pod) {
      gangValue(pod, label)
          .ifPresent(value -> listeners.forEach(l -> l.seen(pod.getMetadata().getNamespace(), value, pod.getMetadata().getName())));
    }
  }

  public boolean synced() {
    var current = watch;
    return current != null && current.informer().hasSynced();
  }

  /** The job label the informer selects by; empty before it starts or without a cluster. */
  public Optional<String> jobLabel() {
    var current = watch;
    return current == null ? Optional.empty() : Optional.of(current.jobLabel());
  }

  /** Live pods (not finished, not being deleted) of a gang. */
  public List<Pod> gangPods(String namespace, String label) {
    var current = watch;
    if (current == null) {
      return List.of();
    }
    return current.informer().getIndexer().byIndex(GANG_INDEX, namespace + "/" + label).stream()
        .filter(PodInventory::live)
        .toList();
  }

  static boolean live(Pod pod) {
    var phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return pod.getMetadata().getDeletionTimestamp() == null && !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }
}
