package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@link ClusterView} over the informer caches. */
@ApplicationScoped
public class InformerClusterView implements ClusterView {
  private final NodeInventory nodes;
  private final PodInventory pods;
  private final NamespaceInventory namespaces;

  public InformerClusterView(NodeInventory nodes, PodInventory pods, NamespaceInventory namespaces) {
    this.nodes = nodes;
    this.pods = pods;
    this.namespaces = namespaces;
  }

  @Override
  public List<GpuNode> nodes() {
    return nodes.nodes();
  }

  @Override
  public List<Pod> gangPods(String namespace, String label) {
    return pods.gangPods(namespace, label);
  }

  @Override
  public Optional<Map<String, String>> namespaceLabels(String namespace) {
    return namespaces.labels(namespace);
  }

  /** True when every informer has listed its objects once. */
  public boolean synced() {
    return nodes.synced() && pods.synced() && namespaces.synced();
  }
}
