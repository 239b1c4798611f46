package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Keeps the GPU ledger current, through {@link LedgerFeed}, from informers on nodes (GPU capacity; in the app from the node inventory's
 * watch, so all nodes are watched once), pods (bound pods' annotations confirm claims; finished and
 * deleted pods free them), and the {@code unhealthy-gpu-<node>} ConfigMaps of kube-system.
 *
 * <p>Why every pod is watched, not only pods the mutating webhook could label: GPU pods the
 * webhook never sees (exempt namespaces such as kube-system, pods created before it was
 * installed, pods admitted while it failed open) hold GPUs too, and a ledger that missed them
 * would give their GPUs away twice. The pod stream is filtered on arrival instead: the store keeps
 * only GPU pods, stripped to the few fields the ledger reads, so memory grows with GPU pods; the
 * initial list is paged.
 */
public final class LedgerWatcher implements AutoCloseable {
  static final String KUBE_SYSTEM = "kube-system";

  private final KubernetesClient client;
  private final LedgerFeed feed;
  private final List<SharedIndexInformer<?>> informers = new ArrayList<>();
  private volatile NodeSource nodes;
  private volatile SharedIndexInformer<Pod> pods;

  public LedgerWatcher(KubernetesClient client, GpuLedger ledger, Supplier<GpuPolicy> policies) {
    this.client = Informers.listing(client);
    this.feed = new LedgerFeed(ledger, policies);
  }

  /**
   * Also tells {@code current} and {@code gone} of every GPU pod, after the ledger has
   * taken it in; call before start. Gang placement keeps its members this way.
   */
  public LedgerWatcher alsoTell(Consumer<Pod> current, Consumer<Pod> gone) {
    feed.alsoTell(current, gone);
    return this;
  }

  /** Starts the informers without waiting for their first list, with a node watch of its own. */
  public LedgerWatcher start() {
    var nodes = client.nodes().withLimit(BoundPods.PAGE).runnableInformer(0);
    nodes.removeNamespaceIndex();
    nodes.itemStore(new KeepOnlyStore<Node>(n -> true, NodeFields::strip));
    informers.add(nodes);
    start(NodeSource.over(nodes));
    Informers.start(nodes, "node (GPU ledger)");
    return this;
  }

  /** Starts the pod and ConfigMap informers; nodes come from {@code nodeSource} (in the app, the node inventory's watch). */
  public LedgerWatcher start(NodeSource nodeSource) {
    this.nodes = nodeSource;
    nodeSource.subscribe(feed::node, feed::nodeGone);
    var pods = client.pods().inAnyNamespace().withLimit(BoundPods.PAGE).runnableInformer(0);
    this.pods = pods;
    pods.removeNamespaceIndex();
    pods.itemStore(new KeepOnlyStore<Pod>(feed::keeps, feed::strip));
    pods.addEventHandler(Informers.handlerByUid(feed::pod, feed::podGone));
    var maps = client.configMaps().inNamespace(KUBE_SYSTEM).withLimit(BoundPods.PAGE).runnableInformer(0);
    maps.removeNamespaceIndex();
    maps.itemStore(new KeepOnlyStore<ConfigMap>(LedgerFeed::unhealthyGpus, m -> m));
    maps.addEventHandler(Informers.handler(feed::configMap, feed::configMapGone));
    informers.add(Informers.start(pods, "pod (GPU ledger)"));
    informers.add(Informers.start(maps, "unhealthy-GPU ConfigMap"));
    return this;
  }

  /** The nodes this watcher reads (its own watch, or the one it was started with); empty before start. */
  public List<Node> nodes() {
    var current = nodes;
    return current == null ? List.of() : current.list();
  }

  /** The GPU pods the informer holds now, stripped as the ledger keeps them. */
  public List<Pod> gpuPods() {
    return pods == null ? List.of() : pods.getStore().list();
  }

  public boolean synced() {
    return !informers.isEmpty() && informers.stream().allMatch(SharedIndexInformer::hasSynced);
  }

  @Override
  public void close() {
    informers.forEach(Informers::stop);
  }

  /** The policy's node labels changed: every node is read again, not just the next one to change. */
  public void remapNodes() {
    var current = nodes;
    if (current != null) {
      current.list().forEach(feed::node);
    }
  }
}
