package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSpec;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.HashMap;

/**
 * A node as the service keeps it: name, labels, its gpu-admission.io/ annotations, taints,
 * cordon, capacity and allocatable: what the GPU ledger, node mapping and placement read. A real
 * Node object carries its images, conditions, addresses, node info and managed fields besides
 * (10-20 KB each, most of it status.images), which nothing here reads: kept whole, a thousand nodes would fill the heap the
 * Deployment gives the JVM. Plain setters, not the model's builders (which deep-copy): fabric8
 * runs the store on its HTTP event loop.
 */
final class NodeFields {
  /**
   * The only node annotations read here (the GPU memory a node declares per GPU); others (kubectl
   * apply's copy of the whole object, the CSI and cloud controllers' notes) can be large.
   */
  static final String OWN_ANNOTATIONS = "gpu-admission.io/";

  private NodeFields() {}

  static Node strip(Node node) {
    var source = node.getMetadata();
    var meta = new ObjectMeta();
    meta.setName(source.getName());
    meta.setUid(source.getUid());
    meta.setResourceVersion(source.getResourceVersion());
    meta.setLabels(source.getLabels());
    if (source.getAnnotations() != null) {
      var annotations = new HashMap<String, String>();
      source.getAnnotations().forEach((key, value) -> {
        if (key.startsWith(OWN_ANNOTATIONS)) {
          annotations.put(key, value);
        }
      });
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
    return SharedParts.share(out);
  }
}
