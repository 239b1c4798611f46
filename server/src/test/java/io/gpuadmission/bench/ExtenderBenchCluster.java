package io.gpuadmission.bench;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.net.InetAddress;
import java.util.HashMap;

/**
 * A mock API server holding a generated GPU cluster for the extender benchmark: {@code nodes} nodes
 * named {@code gpu-node-00000…} (8 V100 16 GB each, the names of
 * ../shared/bench/fixtures/extender-args-N.json) and {@code gpuPods} bound 4 GiB shares spread over
 * them. Runs until killed.
 *
 * <p>Usage: {@code ExtenderBenchCluster PORT NODES GPU_PODS}
 */
public final class ExtenderBenchCluster {
  private ExtenderBenchCluster() {}

  public static void main(String[] args) throws Exception {
    var port = Integer.parseInt(args[0]);
    var nodes = Integer.parseInt(args[1]);
    var gpuPods = Integer.parseInt(args[2]);
    var responses = new HashMap<io.fabric8.mockwebserver.ServerRequest, java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    var server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, new KubernetesMixedDispatcher(responses), false);
    server.init(InetAddress.getLoopbackAddress(), port);
    try (var client = server.createClient()) {
      for (int n = 0; n < nodes; n++) {
        client.resource(new NodeBuilder().withNewMetadata().withName(String.format("gpu-node-%05d", n))
            .addToLabels("aliyun.accelerator/nvidia_count", "8")
            .addToLabels("aliyun.accelerator/nvidia_mem", "16160MiB")
            .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB")
            .addToLabels("ack.node.gpu.schedule", "cgpu")
            .endMetadata().build()).create();
      }
      for (int p = 0; p < gpuPods; p++) {
        var node = String.format("gpu-node-%05d", p % nodes);
        client.resource(new PodBuilder().withNewMetadata().withName("share-" + p).withNamespace("bench")
            .addToAnnotations("ALIYUN_COM_GPU_MEM_IDX", Integer.toString(p / nodes % 8))
            .addToAnnotations("ALIYUN_COM_GPU_MEM_POD", "4")
            .endMetadata()
            .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("cuda")
            .withNewResources().addToLimits("aliyun.com/gpu-mem", new Quantity("4")).endResources()
            .endContainer().endSpec()
            .withNewStatus().withPhase("Running").endStatus().build()).create();
      }
    }
    System.out.println("ready: http://127.0.0.1:" + port + " nodes=" + nodes + " gpuPods=" + gpuPods);
    Thread.currentThread().join();
  }
}
