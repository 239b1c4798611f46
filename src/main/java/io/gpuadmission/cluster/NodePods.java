package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.placement.GpuAnnotations;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The pods bound to one node, for that node's agent: one watch with a {@code spec.nodeName} field
 * selector (what the kubelet itself watches), each pod stripped to its identity, node and the two
 * GPU annotations the agent compares (the extender's choice and what the node gave).
 */
public final class NodePods implements AutoCloseable {
  /** A pod of this node as the agent needs it. */
  public record NodePod(String namespace, String name, String uid, String node, Map<String, String> annotations) {
    public NodePod {
      annotations = Map.copyOf(annotations);
    }

    public String key() {
      return namespace + "/" + name;
    }
  }

  /** The annotations the agent reads: bind's choice and split, what the node gave, whether the plugin handed the choice over. */
  private static final String[] KEPT_ANNOTATIONS = {
    GpuAnnotations.GPU_INDICES, GpuAnnotations.GPU_ALLOCATED, GpuAnnotations.GPU_ASSIGNED, io.gpuadmission.placement.ContainerGpus.CONTAINER_GPUS
  };

  private final KubernetesClient client;
  private final SharedIndexInformer<Pod> informer;
  /** Pod UID to the order in which this node's pods arrived (0: in the first list). */
  private final Map<String, Long> arrivals = new java.util.concurrent.ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.AtomicLong arrived = new java.util.concurrent.atomic.AtomicLong();
  /** Counts every pod added or changed; waiters on it are woken at each. */
  private long changes;

  private NodePods(KubernetesClient client, SharedIndexInformer<Pod> informer) {
    this.client = client;
    this.informer = informer;
  }

  /** Starts watching without waiting for the first list; retries whatever fails. */
  public static NodePods start(KubernetesClient client, String node) {
    var informer = client.pods().inAnyNamespace().withField("spec.nodeName", node).withLimit(BoundPods.PAGE).runnableInformer(0);
    informer.removeNamespaceIndex();
    informer.itemStore(new KeepOnlyStore<Pod>(p -> true, NodePods::strip));
    var pods = new NodePods(client, informer);
    informer.addEventHandler(new io.fabric8.kubernetes.client.informers.ResourceEventHandler<Pod>() {
      @Override
      public void onAdd(Pod pod) {
        // The kubelet watches the same pods with the same field selector: it admits what its first
        // list holds as one batch, then each pod as its watch brings it, in this same order.
        pods.arrivals.putIfAbsent(pod.getMetadata().getUid(), informer.hasSynced() ? pods.arrived.incrementAndGet() : 0L);
        pods.changed();
      }

      @Override
      public void onUpdate(Pod before, Pod pod) {
        pods.changed();
      }

      @Override
      public void onDelete(Pod pod, boolean unknownFinalState) {
        pods.arrivals.remove(pod.getMetadata().getUid());
      }
    });
    Informers.start(informer, "node pods");
    return pods;
  }

  /** Every pod the API server shows on this node, as stripped for the agent. */
  public java.util.List<Pod> all() {
    return informer.getStore().list();
  }

  private synchronized void changed() {
    changes++;
    notifyAll();
  }

  /** How many times a pod was added or changed so far: what {@link #awaitChange} compares with. */
  public synchronized long changes() {
    return changes;
  }

  /**
   * Waits until a pod is added or changed after {@code seen} was read from {@link #changes}, at most
   * {@code timeout}; whether one was.
   */
  public synchronized boolean awaitChange(long seen, java.time.Duration timeout) throws InterruptedException {
    var deadline = System.nanoTime() + timeout.toNanos();
    while (changes == seen) {
      var left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /** When the pod arrived on this node relative to the others: 0 for the first list, then 1, 2, ... */
  public long arrival(String uid) {
    return arrivals.getOrDefault(uid, Long.MAX_VALUE);
  }

  /** The pod as last seen, if the API server shows it on a node. */
  public Optional<NodePod> get(String namespace, String name) {
    var pod = informer.getStore().getByKey(namespace + "/" + name);
    if (pod == null) {
      return Optional.empty();
    }
    var meta = pod.getMetadata();
    return Optional.of(new NodePod(meta.getNamespace(), meta.getName(), meta.getUid(), pod.getSpec().getNodeName(),
        meta.getAnnotations() == null ? Map.of() : meta.getAnnotations()));
  }

  /**
   * A JSON merge patch of the pod, sent as is: on a pod object, because fabric8 first reads a pod
   * named only by name (a get, which the agent's RBAC does not grant).
   */
  public void patch(NodePod pod, String mergePatch) {
    var meta = new ObjectMeta();
    meta.setNamespace(pod.namespace());
    meta.setName(pod.name());
    var target = new Pod();
    target.setMetadata(meta);
    client.pods().inNamespace(pod.namespace()).resource(target).patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch);
  }

  public boolean synced() {
    return informer.hasSynced();
  }

  @Override
  public void close() {
    Informers.stop(informer);
  }

  static Pod strip(Pod pod) {
    var source = pod.getMetadata();
    var meta = new ObjectMeta();
    meta.setName(source.getName());
    meta.setNamespace(source.getNamespace());
    meta.setUid(source.getUid());
    meta.setResourceVersion(source.getResourceVersion());
    var kept = new HashMap<String, String>();
    if (source.getAnnotations() != null) {
      for (var key : KEPT_ANNOTATIONS) {
        if (source.getAnnotations().containsKey(key)) {
          kept.put(key, source.getAnnotations().get(key));
        }
      }
    }
    meta.setAnnotations(kept);
    meta.setCreationTimestamp(source.getCreationTimestamp());
    meta.setDeletionTimestamp(source.getDeletionTimestamp());
    var spec = new PodSpec();
    var from = pod.getSpec();
    spec.setNodeName(from == null ? null : from.getNodeName());
    if (from != null) {
      // What the device plugin needs to follow the kubelet through the pod's containers: their
      // names, order, whole-GPU limits and which init containers are sidecars.
      spec.setInitContainers(from.getInitContainers() == null ? null : from.getInitContainers().stream().map(NodePods::strip).toList());
      spec.setContainers(from.getContainers() == null ? null : from.getContainers().stream().map(NodePods::strip).toList());
    }
    var out = new Pod();
    out.setMetadata(meta);
    out.setSpec(spec);
    if (pod.getStatus() != null && pod.getStatus().getPhase() != null) {
      var status = new io.fabric8.kubernetes.api.model.PodStatus();
      status.setPhase(pod.getStatus().getPhase());
      out.setStatus(status);
    }
    return out;
  }

  private static io.fabric8.kubernetes.api.model.Container strip(io.fabric8.kubernetes.api.model.Container container) {
    var out = new io.fabric8.kubernetes.api.model.Container();
    out.setName(container.getName());
    out.setRestartPolicy(container.getRestartPolicy());
    if (container.getResources() != null) {
      var resources = new io.fabric8.kubernetes.api.model.ResourceRequirements();
      resources.setLimits(container.getResources().getLimits());
      resources.setRequests(container.getResources().getRequests());
      out.setResources(resources);
    }
    return out;
  }
}
