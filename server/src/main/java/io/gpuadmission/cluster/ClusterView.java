package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** What validation, the command line and the tests read of the cluster: informer caches (InformerClusterView), never the API server. */
public interface ClusterView {
  /** Every known node (GPU or not); empty when there is no cluster or the cache is not filled. */
  List<GpuNode> nodes();

  /** Live pods carrying the gang's topology label value in a namespace. */
  List<Pod> gangPods(String namespace, String label);

  /** A namespace's labels, empty when it is not known. */
  Optional<Map<String, String>> namespaceLabels(String namespace);

  /** A view with nothing in it: no cluster. */
  ClusterView EMPTY = ofNodes(List.of());

  /** A view of {@code nodes} alone: no gang pods, no namespace labels (the CLI's and the tests' cluster). */
  static ClusterView ofNodes(List<GpuNode> nodes) {
    return new ClusterView() {
      @Override
      public List<GpuNode> nodes() {
        return nodes;
      }

      @Override
      public List<Pod> gangPods(String namespace, String label) {
        return List.of();
      }

      @Override
      public Optional<Map<String, String>> namespaceLabels(String namespace) {
        return Optional.empty();
      }
    };
  }
}
