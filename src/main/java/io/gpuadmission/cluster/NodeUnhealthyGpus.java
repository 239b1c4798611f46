package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One node's unhealthy-GPU ConfigMap ({@code kube-system/unhealthy-gpu-<node>}, key {@code gpus}),
 * for that node's agent: one watch with a {@code metadata.name} field selector. Tells {@code
 * changed} the GPUs it names on every change (none once it is deleted).
 */
public final class NodeUnhealthyGpus implements AutoCloseable {
  public static final String NAMESPACE = "kube-system";

  private final SharedIndexInformer<ConfigMap> informer;

  private NodeUnhealthyGpus(SharedIndexInformer<ConfigMap> informer) {
    this.informer = informer;
  }

  public static NodeUnhealthyGpus start(KubernetesClient client, String node, Consumer<Set<Integer>> changed) {
    var name = GpuCapacityMapper.UNHEALTHY_PREFIX + node;
    var informer = client.configMaps().inNamespace(NAMESPACE).withField("metadata.name", GpuCapacityMapper.UNHEALTHY_PREFIX + node)
        .runnableInformer(0);
    informer.addEventHandler(new ResourceEventHandler<ConfigMap>() {
      @Override
      public void onAdd(ConfigMap map) {
        if (name.equals(map.getMetadata().getName())) {
          changed.accept(GpuCapacityMapper.unhealthyGpus(map));
        }
      }

      @Override
      public void onUpdate(ConfigMap before, ConfigMap map) {
        onAdd(map);
      }

      @Override
      public void onDelete(ConfigMap map, boolean unknownFinalState) {
        if (name.equals(map.getMetadata().getName())) {
          changed.accept(Set.of());
        }
      }
    });
    Informers.start(informer, "unhealthy GPUs");
    return new NodeUnhealthyGpus(informer);
  }

  @Override
  public void close() {
    Informers.stop(informer);
  }
}
