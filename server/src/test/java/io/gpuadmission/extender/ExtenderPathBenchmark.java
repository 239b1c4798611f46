package io.gpuadmission.extender;

import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.GpuNodeCapacity;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyStore;
import java.io.IOException;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The extender's filter and prioritize without HTTP: request bytes in, decode, decision over the
 * ledger, answer bytes out, for the load harness' ExtenderArgs of 500 and 5,000 node names (copied
 * under {@code bench/}). The ledger is {@code bench/extender-bench.sh}'s cluster: 5,000 nodes of 8
 * V100 16 GB and 20,000 bound 4 GiB shares, whose Node objects (labels, allocatable {@code
 * nvidia.com/gpu}, a GPU taint the pod tolerates: every check runs and passes) the decider judges the pod's eligibility by, as the node informer gives them.
 * Run with {@code bench/jmh.sh ExtenderPathBenchmark -prof gc}: {@code gc.alloc.rate.norm} (bytes
 * per request) is the figure machine load cannot move.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ExtenderPathBenchmark {
  static final int CLUSTER_NODES = 5000;
  static final int GPU_PODS = 20000;

  @Param({"500", "5000"})
  public int nodes;

  /**
   * The fixture's pod is a worker of a 4-replica topology job: alone in the bench cluster it is a
   * gang member waiting for the rest, refused on every node with one reason ({@code gang}). With
   * its job labels taken off it is placed on its own ({@code alone}), the path the goals of issue 8
   * were set for.
   */
  @Param({"alone", "gang"})
  public String pod;

  private byte[] args;
  private ExtenderService service;

  @Setup
  public void setUp() throws IOException {
    try (var in = getClass().getResourceAsStream("/bench/extender-args-" + nodes + ".json")) {
      args = in.readAllBytes();
    }
    if (pod.equals("alone")) {
      var tree = (com.fasterxml.jackson.databind.node.ObjectNode) io.gpuadmission.admission.KubernetesJson.mapper().readTree(args);
      ((com.fasterxml.jackson.databind.node.ObjectNode) tree.at("/Pod/metadata/labels")).remove(List.of("gpu-topology", "gpu-topology-replica"));
      args = io.gpuadmission.admission.KubernetesJson.mapper().writeValueAsBytes(tree);
    }
    var policies = new PolicyStore();
    var ledger = benchLedger();
    var nodeObjects = benchNodes();
    var decider = new PlacementDecider(ledger, policies::current, () -> io.gpuadmission.placement.TargetWorkload.NONE, name -> Optional.ofNullable(nodeObjects.get(name)));
    var gangs = new io.gpuadmission.gang.GangRegistry(policies::current);
    var gate = new io.gpuadmission.gang.GangGate(
        gangs, new io.gpuadmission.gang.GangPlanning(decider, ledger, java.util.List::of, gangs), policies::current, java.time.Duration.ofSeconds(60));
    service = Services.withoutPreemption(decider, gate, policies, ledger);
  }

  /** The cluster of {@code bench/ExtenderBenchCluster}, straight into a ledger. */
  static GpuLedger benchLedger() {
    var ledger = new GpuLedger();
    for (int n = 0; n < CLUSTER_NODES; n++) {
      ledger.putNode(new GpuNodeCapacity(name(n), "Tesla-V100-SXM2-16GB", Collections.nCopies(8, 15L), Optional.empty()));
    }
    for (int p = 0; p < GPU_PODS; p++) {
      ledger.confirm(GpuClaim.bound("uid-" + p, "bench/share-" + p, name(p % CLUSTER_NODES), List.of(p / CLUSTER_NODES % 8), 4));
    }
    return ledger;
  }

  /** The bench cluster's Node objects as the node informer keeps them: labels, taints, allocatable. */
  static java.util.Map<String, io.fabric8.kubernetes.api.model.Node> benchNodes() {
    var nodes = new java.util.HashMap<String, io.fabric8.kubernetes.api.model.Node>();
    for (int n = 0; n < CLUSTER_NODES; n++) {
      nodes.put(
          name(n),
          new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName(name(n))
              .addToLabels("aliyun.accelerator/nvidia_count", "8")
              .addToLabels("aliyun.accelerator/nvidia_mem", "16160MiB")
              .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB")
              .addToLabels("ack.node.gpu.schedule", "default")
              .endMetadata()
              .withNewSpec().addNewTaint().withKey("nvidia.com/gpu").withEffect("NoSchedule").endTaint().endSpec()
              .withNewStatus()
              .addToAllocatable("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("8"))
              .addToAllocatable("cpu", new io.fabric8.kubernetes.api.model.Quantity("96"))
              .endStatus()
              .build());
    }
    return nodes;
  }

  private static String name(int n) {
    return String.format("gpu-node-%05d", n);
  }

  @Benchmark
  public byte[] filter() {
    return ExtenderCodec.filterAnswer(service.filter(ExtenderCodec.args(args)));
  }

  @Benchmark
  public byte[] prioritize() {
    return ExtenderCodec.prioritizeAnswer(service.prioritize(ExtenderCodec.args(args)));
  }

  @Benchmark
  public Object decodeOnly() {
    return ExtenderCodec.args(args);
  }
}
