package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.function.Consumer;

/**
 * Watches every PodDisruptionBudget (few objects, kept whole) for preemption and quota reclaim,
 * which prefer victims that violate none, as kube-scheduler's preemption does.
 */
public final class DisruptionBudgetWatcher implements AutoCloseable {
  private final SharedIndexInformer<PodDisruptionBudget> informer;

  public DisruptionBudgetWatcher(KubernetesClient client, Consumer<PodDisruptionBudget> current, Consumer<PodDisruptionBudget> gone) {
    informer = client.policy().v1().podDisruptionBudget().inAnyNamespace().withLimit(BoundPods.PAGE).runnableInformer(0);
    informer.addEventHandler(Informers.handler(current, gone));
  }

  /** Starts without waiting for the first list, retrying as every informer here does. */
  public DisruptionBudgetWatcher start() {
    Informers.start(informer, "PodDisruptionBudget");
    return this;
  }

  @Override
  public void close() {
    Informers.stop(informer);
  }
}
