package io.gpuadmission.placement;

/** kube-scheduler's bind call: the pod (namespace, name, UID) and the node it chose. */
public record BindRequest(String namespace, String podName, String podUid, String node) {
  public String pod() {
    return namespace + "/" + podName;
  }
}
