package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.policy.PolicyParser;

/**
 * Heap the extender keeps for a generated cluster: every node and pod goes through the same item
 * stores, ledger updates and preemption facts as {@link LedgerWatcher}'s informers (without the
 * HTTP transport), then
 * the retained heap is measured after a full GC. For comparison, the same pods kept whole, as a
 * plain informer of all pods would.
 *
 * <p>Usage: {@code LedgerHeapBench NODES PODS GPU_PODS}
 */
public final class LedgerHeapBench {
  private LedgerHeapBench() {}

  public static void main(String[] args) throws Exception {
    var nodes = Integer.parseInt(args[0]);
    var pods = Integer.parseInt(args[1]);
    var gpuPods = Integer.parseInt(args[2]);
    var policy = PolicyParser.builtInDefault();
    var before = used();
    var ledger = new GpuLedger();
    var nodeStore = new KeepOnlyStore<Node>(n -> true, NodeFields::strip);
    var podStore = new KeepOnlyStore<Pod>(p -> BoundPods.isGpuPod(p, policy), p -> BoundPods.strip(p, policy));
    // What preemption keeps of each GPU pod (priority, start, gang, labels), as the app feeds it.
    var facts = new io.gpuadmission.preemption.PodFactsIndex(() -> policy, ledger);
    for (int n = 0; n < nodes; n++) {
      var node = node(n);
      nodeStore.put(nodeStore.getKey(node), node);
      GpuCapacityMapper.map(node, policy.nodeLabels()).ifPresent(ledger::putNode);
    }
    var afterNodes = used();
    for (int p = 0; p < pods; p++) {
      var pod = pod(p, p < gpuPods, nodes);
      podStore.put(podStore.getKey(pod), pod);
      if (p < gpuPods) {
        PodClaims.claimOf(pod).ifPresent(ledger::confirm);
        facts.current(pod);
      }
    }
    var afterPods = used();
    System.out.printf(
        "nodes=%d pods=%d gpuPods=%d kept_pods=%d claims=%d heap_nodes_mib=%.1f heap_pods_and_claims_mib=%.1f total_mib=%.1f bytes_per_gpu_pod=%.0f%n",
        nodes, pods, gpuPods, podStore.size(), ledger.claims().size(), (afterNodes - before) / 1048576.0,
        (afterPods - afterNodes) / 1048576.0, (afterPods - before) / 1048576.0, (afterPods - afterNodes) / (double) gpuPods);
    var whole = new java.util.ArrayList<Pod>(pods);
    for (int p = 0; p < pods; p++) {
      whole.add(pod(p, p < gpuPods, nodes));
    }
    var afterWhole = used();
    System.out.printf("for comparison: the same %d pods kept whole (a plain informer) mib=%.1f%n", whole.size(), (afterWhole - afterPods) / 1048576.0);
    if (ledger.nodes().size() != nodes || nodeStore.size() != nodes) {
      throw new IllegalStateException("lost nodes");
    }
  }

  private static long used() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(200);
    }
    var runtime = Runtime.getRuntime();
    return runtime.totalMemory() - runtime.freeMemory();
  }

  private static Node node(int n) {
    return new NodeBuilder().withNewMetadata().withName(String.format("gpu-node-%05d", n))
        .addToLabels("aliyun.accelerator/nvidia_count", "8")
        .addToLabels("aliyun.accelerator/nvidia_mem", "16160MiB")
        .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB")
        .addToLabels("ack.node.gpu.schedule", "cgpu")
        .addToLabels("kubernetes.io/hostname", String.format("gpu-node-%05d", n))
        .endMetadata()
        .withNewStatus().addToAllocatable("cpu", new Quantity("96")).addToAllocatable("memory", new Quantity("768Gi"))
        .addToAllocatable("aliyun.com/gpu-mem", new Quantity("120")).addToAllocatable("aliyun.com/gpu-count", new Quantity("8"))
        .endStatus().build();
  }

  /** A realistic-sized pod: labels, an owner, env, a volume; GPU pods bound with gpushare annotations. */
  private static Pod pod(int p, boolean gpu, int nodes) {
    var builder = new PodBuilder().withNewMetadata().withName("pod-" + p).withNamespace("team-" + (p % 50)).withUid("uid-" + p)
        .withResourceVersion(Integer.toString(1000 + p))
        .addToLabels("app", "service-" + (p % 400)).addToLabels("pod-template-hash", "7d9f8c6b5")
        .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName("service-" + (p % 400) + "-7d9f8c6b5")
        .withUid("rs-" + (p % 400)).withController(true).endOwnerReference()
        .endMetadata()
        .withNewSpec().withNodeName(String.format("gpu-node-%05d", p % nodes)).addNewContainer().withName("main")
        .withImage("registry.example.com/team/service:1.2.3").addNewEnv().withName("LOG_LEVEL").withValue("info").endEnv()
        .withNewResources().addToRequests("cpu", new Quantity("500m")).addToRequests("memory", new Quantity("1Gi"))
        .endResources().endContainer()
        .addNewVolume().withName("config").withNewConfigMap().withName("service-config").endConfigMap().endVolume()
        .endSpec().withNewStatus().withPhase("Running").withPodIP("10.0." + (p / 250 % 250) + "." + (p % 250)).endStatus();
    var pod = builder.build();
    if (gpu) {
      pod.getMetadata().setAnnotations(new java.util.HashMap<>(java.util.Map.of("ALIYUN_COM_GPU_MEM_IDX", Integer.toString(p / nodes % 8), "ALIYUN_COM_GPU_MEM_POD", "4")));
      pod.getSpec().getContainers().get(0).getResources().setLimits(new java.util.HashMap<>(java.util.Map.of("aliyun.com/gpu-mem", new Quantity("4"))));
    }
    return pod;
  }
}
