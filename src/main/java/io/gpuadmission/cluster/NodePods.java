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

  private final KubernetesClient client;
  private final SharedIndexInformer<Pod> informer;

  private NodePods(KubernetesClient client, SharedIndexInformer<Pod> informer) {
    this.client = client;
    this.informer = informer;
  }

  /** Starts watching without waiting for the first list; retries whatever fails. */
  public static NodePods start(KubernetesClient client, String node) {
    var informer = client.pods().inAnyNamespace().withField("spec.nodeName", node).withLimit(BoundPods.PAGE).runnableInformer(0);
    informer.removeNamespaceIndex();
    informer.itemStore(new KeepOnlyStore<Pod>(p -> true, NodePods::strip));
    Informers.start(informer, "node pods");
    return new NodePods(client, informer);
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
      for (var key : new String[] {GpuAnnotations.GPU_INDICES, GpuAnnotations.GPU_ALLOCATED}) {
        if (source.getAnnotations().containsKey(key)) {
          kept.put(key, source.getAnnotations().get(key));
        }
      }
    }
    meta.setAnnotations(kept);
    var spec = new PodSpec();
    spec.setNodeName(pod.getSpec() == null ? null : pod.getSpec().getNodeName());
    var out = new Pod();
    out.setMetadata(meta);
    out.setSpec(spec);
    return out;
  }
}
