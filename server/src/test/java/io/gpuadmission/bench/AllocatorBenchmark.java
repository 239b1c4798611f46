package io.gpuadmission.bench;

import io.gpuadmission.allocator.FgdPolicy;
import io.gpuadmission.allocator.FirstFitStrategy;
import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.HeuristicPolicy;
import io.gpuadmission.allocator.LinkMatrix;
import io.gpuadmission.allocator.NodeFit;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.allocator.TaskDistribution;
import io.gpuadmission.allocator.TopologyAwareStrategy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * One allocator decision per call, single thread, sampled so that p99 can be read. Run with
 * {@code bench/jmh.sh}; figures go to bench/README.md, never into assertions.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class AllocatorBenchmark {
  private final TopologyAwareStrategy topology = new TopologyAwareStrategy();
  private NodeGpus dgx1HalfUsed;
  private NodeGpus dgx2Exhaustive;
  private NodeGpus nvSwitch16;
  private NodeGpus nvl72;
  private NodeGpus shareNode;
  private List<NodeGpus> traceCluster;
  private HeuristicPolicy binpack;
  private FgdPolicy fgd;
  private Task share;
  private List<NodeGpus> gangCluster;
  private final io.gpuadmission.allocator.GangPlanner gangPlanner = new io.gpuadmission.allocator.GangPlanner(topology);

  @Setup
  public void setUp() throws Exception {
    dgx1HalfUsed = node(LinkMatrix.dgx1V100(), 0b0001_0010);
    dgx2Exhaustive = node(twoDgx1Boards(), 0b0000_0001_0000_0010);
    var numa16 = new int[16];
    for (int i = 0; i < 16; i++) {
      numa16[i] = i / 4;
    }
    nvSwitch16 = node(LinkMatrix.nvSwitch(16, 6, numa16), 0b0000_0000_0010_0001);
    var numa72 = new int[72];
    for (int i = 0; i < 72; i++) {
      numa72[i] = i / 2;
    }
    nvl72 = node(LinkMatrix.nvSwitch(72, 18, numa72), 0b1010_0101L);
    var gpus = new ArrayList<GpuDevice>();
    long[] used = {300, 800, 0, 650, 1000, 120, 470, 0};
    for (int i = 0; i < 8; i++) {
      gpus.add(new GpuDevice(i, "G2", 1000, used[i], true));
    }
    shareNode = new NodeGpus("share", gpus, Optional.empty(), 96000, 40000);
    traceCluster = TraceSimulator.readCluster(Path.of("server/src/test/resources/trace/openb_node_list_gpu_node.csv"));
    var pods = TraceSimulator.readPods(Path.of("server/src/test/resources/trace/openb_pod_list_default.csv"));
    binpack = new HeuristicPolicy(HeuristicPolicy.Kind.BINPACK, new FirstFitStrategy());
    fgd = new FgdPolicy(TaskDistribution.of(pods.stream().filter(t -> t.gpus() > 0).toList()), new FirstFitStrategy());
    share = Task.share(6000, 470);
    gangCluster = gangCluster(500);
  }

  /**
   * 500 8-GPU nodes, half DGX-1 cube meshes and half NVSwitch boards, each with a different mix of
   * GPUs in use (fixed seed): the cluster a 16 x 8 gang is planned over.
   */
  static List<NodeGpus> gangCluster(int size) {
    var random = new java.util.Random(42);
    var nodes = new ArrayList<NodeGpus>(size);
    var numa8 = new int[] {0, 0, 0, 0, 1, 1, 1, 1};
    for (int n = 0; n < size; n++) {
      var links = n % 2 == 0 ? LinkMatrix.dgx1V100() : LinkMatrix.nvSwitch(8, 12, numa8);
      // Three nodes in four have some GPUs in use, so most cannot take an 8-GPU member.
      var usedMask = random.nextInt(4) == 0 ? 0 : random.nextInt(256);
      var gpus = new ArrayList<GpuDevice>();
      for (int i = 0; i < 8; i++) {
        gpus.add(new GpuDevice(i, "GPU", 16, (usedMask >> i & 1) == 1 ? 16 : 0, true));
      }
      nodes.add(NodeGpus.withoutCpu("node-" + n, gpus, Optional.of(links)));
    }
    return nodes;
  }

  /** Issue 9's figure: one plan for a gang of 16 members x 8 GPUs over 500 nodes. */
  @Benchmark
  public Object gangPlan16x8Over500Nodes() {
    return gangPlanner.plan(gangCluster, 16, 8);
  }

  /** 16 GPUs as two DGX-1 cube meshes joined by SYS: irregular, so searched exhaustively. */
  public static LinkMatrix twoDgx1Boards() {
    var one = LinkMatrix.dgx1V100();
    var links = new io.gpuadmission.allocator.Link[16][16];
    var numa = new int[16];
    for (int i = 0; i < 16; i++) {
      numa[i] = i / 4;
      for (int j = 0; j < 16; j++) {
        links[i][j] = i / 8 == j / 8 ? one.link(i % 8, j % 8) : new io.gpuadmission.allocator.Link(0, io.gpuadmission.allocator.PcieLevel.SYS);
      }
    }
    return LinkMatrix.of(links, numa);
  }

  private static NodeGpus node(LinkMatrix links, long usedMask) {
    var gpus = new ArrayList<GpuDevice>();
    for (int i = 0; i < links.size(); i++) {
      gpus.add(new GpuDevice(i, "GPU", 16, (usedMask >> i & 1) == 1 ? 16 : 0, true));
    }
    return NodeGpus.withoutCpu("node", gpus, Optional.of(links));
  }

  @Benchmark
  public Object wholeGpus8Dgx1Choose2() {
    return topology.choose(dgx1HalfUsed, 2);
  }

  @Benchmark
  public Object wholeGpus8Dgx1Choose4() {
    return topology.choose(dgx1HalfUsed, 4);
  }

  @Benchmark
  public Object wholeGpus16NvSwitchGroupedChoose8() {
    return topology.choose(nvSwitch16, 8);
  }

  @Benchmark
  public Object wholeGpus16IrregularExhaustiveChoose8() {
    return topology.choose(dgx2Exhaustive, 8);
  }

  @Benchmark
  public Object wholeGpus72Nvl72Choose8() {
    return topology.choose(nvl72, 8);
  }

  @Benchmark
  public Object memoryShareOneNodeBinpack() {
    return binpack.chooseOnNode(shareNode, share);
  }

  @Benchmark
  public boolean nodeFitCheck() {
    return NodeFit.fits(shareNode, share);
  }

  @Benchmark
  public Object scoreAllTraceNodesFgd() {
    return fgd.place(traceCluster, share);
  }

  @Benchmark
  public Object scoreAllTraceNodesBinpack() {
    return binpack.place(traceCluster, share);
  }
}
