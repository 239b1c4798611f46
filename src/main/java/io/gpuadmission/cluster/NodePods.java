package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.placement.GpuAnnotations;
import java.util.HashMap;
import java.util.Optional;

/**
 * The pods bound to one node, for that node's agent: one watch with a {@code spec.nodeName} field
 * selector (what the kubelet itself watches), each pod stripped to its identity, node and the
 * two GPU annotations the agent compares (our choice and what the node gave).
 */
public final class NodePods implements AutoCloseable {
  private final SharedIndexInformer<Pod> informer;

  private NodePods(SharedIndexInformer<Pod> informer) {
    this.informer = informer;
  }

  /** Starts watching without waiting for the first list; retries whatever fails. */
  public static NodePods start(KubernetesClient client, String node) {
    var informer = client.pods().inAnyNamespace().withField("spec.nodeName", node).withLimit(BoundPods.PAGE).runnableInformer(0);
    informer.removeNamespaceIndex();
    informer.itemStore(new KeepOnlyStore<Pod>(p -> true, NodePods::strip));
    Informers.start(informer, "node pods");
    return new NodePods(informer);
  }

  /** The pod as last seen, if it is on this node. */
  public Optional<Pod> get(String namespace, String name) {
    return Optional.ofNullable(informer.getStore().getByKey(namespace + "/" + name));
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
    if (source.getAnnotations() != null) {
      var kept = new HashMap<String, String>();
      for (var key : new String[] {GpuAnnotations.GPU_INDICES, GpuAnnotations.GPU_ALLOCATED}) {
        if (source.getAnnotations().containsKey(key)) {
          kept.put(key, source.getAnnotations().get(key));
        }
      }
      meta.setAnnotations(kept);
    }
    var spec = new PodSpec();
    spec.setNodeName(pod.getSpec() == null ? null : pod.getSpec().getNodeName());
    var out = new Pod();
    out.setMetadata(meta);
    out.setSpec(spec);
    return out;
  }
}
