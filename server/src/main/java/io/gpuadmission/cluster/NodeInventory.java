package io.gpuadmission.cluster;

import io.gpuadmission.mode.ServerStartup;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyStore;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * The cluster's nodes as {@link GpuNode} records, kept current by a fabric8 informer; requests
 * read it and never call the API server. Derived views are rebuilt on change, not per request.
 */
@ApplicationScoped
public class NodeInventory implements NodeSource {
  private static final Logger LOG = Logger.getLogger(NodeInventory.class);

  private final ClusterConnection cluster;
  private final PolicyStore policies;
  private final Map<String, GpuNode> nodes = new ConcurrentHashMap<>();
  private volatile Snapshot snapshot = new Snapshot(List.of(), GpuModelCatalog.EMPTY);
  private volatile boolean changed;
  private volatile SharedIndexInformer<Node> informer;
  private final List<ResourceEventHandler<Node>> subscribers = new ArrayList<>();

  public NodeInventory(ClusterConnection cluster, PolicyStore policies) {
    this.cluster = cluster;
    this.policies = policies;
  }

  void start(@Observes ServerStartup event) {
    if (!cluster.available()) {
      LOG.info("no cluster configured: node inventory stays empty");
      return;
    }
    // A change of the node labels the policy reads applies to every node at once, not as each changes.
    policies.onChangeOf(GpuPolicy::nodeLabels, policy -> remapAll());
    var nodes = Informers.listing(cluster.client()).nodes().withLimit(BoundPods.PAGE).runnableInformer(0);
    nodes.removeNamespaceIndex();
    nodes.itemStore(new KeepOnlyStore<Node>(n -> true, NodeFields::strip));
    nodes.addEventHandler(Informers.handler(this::put, this::remove));
    synchronized (subscribers) {
      subscribers.forEach(nodes::addEventHandler);
      informer = nodes;
    }
    Informers.start(nodes, "node");
  }

  /** The node labels the policy reads changed: every node is read again, not just the next one to change. */
  private void remapAll() {
    var current = informer;
    if (current == null) {
      return;
    }
    for (var node : current.getStore().list()) {
      put(node);
    }
    LOG.info("policy nodeLabels changed: every node read again");
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    Informers.stop(informer);
  }

  /** True once the informer has listed the nodes at least once. */
  public boolean synced() {
    return informer != null && informer.hasSynced();
  }

  public List<GpuNode> nodes() {
    return snapshot().nodes();
  }

  public GpuModelCatalog models() {
    return snapshot().models();
  }

  /** The node list and model catalog, rebuilt once after changes rather than per event. */
  private Snapshot snapshot() {
    if (changed) {
      synchronized (this) {
        if (changed) {
          changed = false;
          var list = List.copyOf(nodes.values());
          snapshot = new Snapshot(list, GpuModelCatalog.of(list));
        }
      }
    }
    return snapshot;
  }

  private record Snapshot(List<GpuNode> nodes, GpuModelCatalog models) {}

  private void remove(Node node) {
    nodes.remove(node.getMetadata().getName());
    markChanged();
  }

  /**
   * The one watch of all nodes: the GPU ledger reads them from here too. A subscriber that comes
   * before start-up is attached when the informer is made; one after is told the nodes known.
   */
  @Override
  public void subscribe(Consumer<Node> current, Consumer<Node> gone) {
    var handler = Informers.handler(current, gone);
    synchronized (subscribers) {
      if (informer == null) {
        subscribers.add(handler);
      } else {
        informer.addEventHandler(handler);
      }
    }
  }

  @Override
  public List<Node> list() {
    var current = informer;
    return current == null ? List.of() : current.getStore().list();
  }

  @Override
  public Optional<Node> node(String name) {
    var current = informer;
    return current == null ? Optional.empty() : Optional.ofNullable(current.getStore().getByKey(name));
  }

  /** Records a node; public for tests that fill the inventory without a cluster. */
  public void put(Node node) {
    nodes.put(node.getMetadata().getName(), GpuNodeMapper.map(node, policies.current().nodeLabels()));
    markChanged();
  }

  private void markChanged() {
    changed = true;
  }
}
