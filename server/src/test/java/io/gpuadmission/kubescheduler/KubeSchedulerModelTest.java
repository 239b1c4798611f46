package io.gpuadmission.kubescheduler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The model's arithmetic, checked against kube-scheduler v1.32's formulas with numbers worked by hand. */
class KubeSchedulerModelTest {
  private static final long GIB = 1L << 30;

  @Test
  void looksForAsManyFeasibleNodesAsNumFeasibleNodesToFind() {
    // Adaptive: 50 % minus 1 % per 125 nodes, at least 5 %, and never fewer than 100 nodes.
    assertThat(KubeSchedulerModel.numFeasibleNodesToFind(0, 1213)).isEqualTo(1213 * 41 / 100);
    assertThat(KubeSchedulerModel.numFeasibleNodesToFind(0, 6000)).isEqualTo(6000 * 5 / 100);
    assertThat(KubeSchedulerModel.numFeasibleNodesToFind(0, 150)).isEqualTo(100);
    assertThat(KubeSchedulerModel.numFeasibleNodesToFind(0, 99)).isEqualTo(99);
    assertThat(KubeSchedulerModel.numFeasibleNodesToFind(100, 1213)).isEqualTo(1213);
    assertThat(KubeSchedulerModel.numFeasibleNodesToFind(10, 500)).isEqualTo(100);
  }

  @Test
  void scoresLeastAllocatedOnNonZeroRequestsAndBalancedAllocationOnRequests() {
    var node = new KubeSchedulerModel.Node("n", "T4", 8000, 32 * GIB, 110, Map.of());
    var pod = new KubeSchedulerModel.Pod("p", 2000, 8 * GIB, Map.of(), Set.of(), false, null);

    // cpu (8000-2000)*100/8000 = 75, memory (32-8)*100/32 = 75: 75. Fractions 0.25 and 0.25: 100.
    assertThat(KubeSchedulerModel.leastAllocated(pod, node)).isEqualTo(75);
    assertThat(KubeSchedulerModel.balancedAllocation(pod, node)).isEqualTo(100);

    // A pod without requests counts 100m and 200 MiB for LeastAllocated: cpu 98, memory 99 -> 98.
    var empty = new KubeSchedulerModel.Pod("e", 0, 0, Map.of(), Set.of(), false, null);
    assertThat(KubeSchedulerModel.leastAllocated(empty, node)).isEqualTo((98 + 99) / 2);

    // cpu 6000/8000 = 0.75, memory 8/32 = 0.25: std 0.25, (1 - 0.25) * 100 = 75.
    var cpuHeavy = new KubeSchedulerModel.Pod("c", 6000, 8 * GIB, Map.of(), Set.of(), false, null);
    assertThat(KubeSchedulerModel.balancedAllocation(cpuHeavy, node)).isEqualTo(75);
  }

  @Test
  void withWeightOneKubeSchedulersScorersOverturnTheExtendersChoiceAndWithTheShippedWeightNever() throws Exception {
    // The extender wants "busy" (10), the busier node; LeastAllocated and BalancedAllocation prefer
    // "idle" by 38 + 12 points: more than one step of weight 1 (10 points), far less than one of 200.
    var weightOne = configuration(1);
    assertThat(placeOnce(weightOne)).isEqualTo("idle");
    assertThat(placeOnce(configuration(200))).isEqualTo("busy");
  }

  @Test
  void picksUniformlyAmongEqualTotals() throws Exception {
    var config = configuration(200);
    var counts = new HashMap<String, Integer>();
    for (long seed = 0; seed < 3000; seed++) {
      var nodes = List.of(node("a"), node("b"), node("c"));
      var model = new KubeSchedulerModel(config, nodes, Optional.of(flat()), seed, KubeSchedulerModel.Choice.KUBE_SCHEDULER);
      counts.merge(model.schedule(pod()).orElseThrow(), 1, Integer::sum);
    }

    assertThat(counts).containsOnlyKeys("a", "b", "c");
    assertThat(counts.values()).allSatisfy(n -> assertThat(n).isBetween(900, 1100));
  }

  private static String placeOnce(SchedulerConfiguration config) {
    var idle = node("idle");
    var busy = node("busy");
    busy.requestedCpu = 4000;
    busy.nonZeroCpu = 4000;
    busy.requestedMemory = 4 * GIB;
    busy.nonZeroMemory = 4 * GIB;
    var extender =
        new KubeSchedulerModel.Extender() {
          @Override
          public List<String> filter(KubeSchedulerModel.Pod pod, List<String> nodes) {
            return nodes;
          }

          @Override
          public Map<String, Integer> prioritize(KubeSchedulerModel.Pod pod, List<String> nodes) {
            return Map.of("busy", 10, "idle", 9);
          }

          @Override
          public String bind(KubeSchedulerModel.Pod pod, String node) {
            return "";
          }
        };
    var model = new KubeSchedulerModel(config, List.of(idle, busy), Optional.of(extender), 1, KubeSchedulerModel.Choice.KUBE_SCHEDULER);
    return model.schedule(pod()).orElseThrow();
  }

  private static SchedulerConfiguration configuration(long weight) throws Exception {
    return SchedulerConfiguration.parse(
        """
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - schedulerName: gpu-scheduler
          percentageOfNodesToScore: 100
        extenders:
        - urlPrefix: https://extender
          filterVerb: filter
          prioritizeVerb: prioritize
          bindVerb: bind
          weight: %d
          managedResources:
          - name: aliyun.com/gpu-mem
        """
            .formatted(weight),
        Optional.of("gpu-scheduler"));
  }

  /** 8 CPUs, 16 GiB, one 16 GiB GPU. */
  private static KubeSchedulerModel.Node node(String name) {
    return new KubeSchedulerModel.Node(name, "T4", 8000, 16 * GIB, 110, Map.of("aliyun.com/gpu-mem", 16L));
  }

  private static KubeSchedulerModel.Pod pod() {
    return new KubeSchedulerModel.Pod("p", 1000, GIB, Map.of("aliyun.com/gpu-mem", 4L), Set.of(), false, null);
  }

  /** Filters nothing out, scores every node alike. */
  private static KubeSchedulerModel.Extender flat() {
    return new KubeSchedulerModel.Extender() {
      @Override
      public List<String> filter(KubeSchedulerModel.Pod pod, List<String> nodes) {
        return new ArrayList<>(nodes);
      }

      @Override
      public Map<String, Integer> prioritize(KubeSchedulerModel.Pod pod, List<String> nodes) {
        var scores = new HashMap<String, Integer>();
        nodes.forEach(n -> scores.put(n, 5));
        return scores;
      }

      @Override
      public String bind(KubeSchedulerModel.Pod pod, String node) {
        return "";
      }
    };
  }
}
