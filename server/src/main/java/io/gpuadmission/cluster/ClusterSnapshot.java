package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The cluster as given objects describe it (the command line's {@code --cluster}: {@code kubectl
 * get nodes,pods -A -o yaml}), read the way the informers' consumers read theirs: nodes mapped as
 * the node inventory maps them, gang pods selected by the policy's job label and kept while live
 * as the pod inventory keeps them, and everything fed to a GPU ledger through {@link LedgerFeed}.
 */
public final class ClusterSnapshot implements ClusterView {
  private final GpuPolicy policy;
  private final List<Node> nodes;
  private final List<Pod> pods;
  private final Map<String, Map<String, String>> namespaces = new LinkedHashMap<>();
  private final List<ConfigMap> unhealthyGpus;
  private final List<GpuNode> gpuNodes;
  private final GpuModelCatalog models;

  public ClusterSnapshot(GpuPolicy policy, List<Node> nodes, List<Pod> pods, List<Namespace> namespaces, List<ConfigMap> configMaps) {
    this.policy = policy;
    this.nodes = List.copyOf(nodes);
    this.pods = List.copyOf(pods);
    namespaces.forEach(
        n -> this.namespaces.put(n.getMetadata().getName(), n.getMetadata().getLabels() == null ? Map.of() : Map.copyOf(n.getMetadata().getLabels())));
    // The ledger's ConfigMap informer watches kube-system only.
    this.unhealthyGpus =
        configMaps.stream().filter(m -> LedgerWatcher.KUBE_SYSTEM.equals(m.getMetadata().getNamespace()) && LedgerFeed.unhealthyGpus(m)).toList();
    var mapped = new ArrayList<GpuNode>(nodes.size());
    nodes.forEach(n -> mapped.add(GpuNodeMapper.map(n, policy.nodeLabels())));
    this.gpuNodes = List.copyOf(mapped);
    this.models = GpuModelCatalog.of(gpuNodes);
  }

  /** No nodes, pods or namespaces: what the webhook knows without a cluster. */
  public static ClusterSnapshot empty(GpuPolicy policy) {
    return new ClusterSnapshot(policy, List.of(), List.of(), List.of(), List.of());
  }

  @Override
  public List<GpuNode> nodes() {
    return gpuNodes;
  }

  /** The Node objects, as given. */
  public List<Node> nodeObjects() {
    return nodes;
  }

  /** Every pod given. */
  public List<Pod> pods() {
    return pods;
  }

  /** The GPU models the nodes have, as the node inventory derives them. */
  public GpuModelCatalog models() {
    return models;
  }

  @Override
  public List<Pod> gangPods(String namespace, String label) {
    var jobLabel = policy.topology().jobLabel();
    return pods.stream()
        .filter(p -> namespace.equals(p.getMetadata().getNamespace()))
        .filter(p -> PodInventory.gangValue(p, jobLabel).filter(label::equals).isPresent())
        .filter(PodInventory::live)
        .toList();
  }

  @Override
  public Optional<Map<String, String>> namespaceLabels(String namespace) {
    return Optional.ofNullable(namespaces.get(namespace));
  }

  /** Tells {@code feed} of every node, unhealthy-GPU ConfigMap and pod, in that order, as the informers' first lists would. */
  public void feed(LedgerFeed feed) {
    nodes.forEach(feed::node);
    unhealthyGpus.forEach(feed::configMap);
    pods.forEach(feed::pod);
  }
}
