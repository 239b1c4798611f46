package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSpec;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.HashMap;

/**
 * A node as the service keeps it: name, labels, annotations, taints, cordon, capacity and
 * allocatable. A real Node object carries its images, conditions and managed fields besides
 * (10-20 KB each), which nothing here reads: kept whole, a thousand nodes would fill the heap the
 * Deployment gives the JVM. Plain setters, not the model's builders (which deep-copy): fabric8
 * runs the store on its HTTP event loop.
 */
final class NodeFields {
  /** kubectl apply's copy of the whole object: large, and read by nothing here. */
  private static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

  private NodeFields() {}

  static Node strip(Node node) {
    var source = node.getMetadata();
    var meta = new ObjectMeta();
    meta.setName(source.getName());
    meta.setUid(source.getUid());
    meta.setResourceVersion(source.getResourceVersion());
    meta.setLabels(source.getLabels());
    if (source.getAnnotations() != null) {
      var annotations = new HashMap<>(source.getAnnotations());
      annotations.remove(LAST_APPLIED);
      meta.setAnnotations(annotations);
    }
    var spec = new NodeSpec();
    if (node.getSpec() != null) {
      spec.setTaints(node.getSpec().getTaints());
      spec.setUnschedulable(node.getSpec().getUnschedulable());
    }
    var status = new NodeStatus();
    if (node.getStatus() != null) {
      status.setCapacity(node.getStatus().getCapacity());
      status.setAllocatable(node.getStatus().getAllocatable());
    }
    var out = new Node();
    out.setMetadata(meta);
    out.setSpec(spec);
    out.setStatus(status);
    return out;
  }
}
