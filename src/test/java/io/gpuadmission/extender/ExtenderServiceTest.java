package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeListBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangRegistry;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.WorkloadLearner;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.support.Fixtures;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The extender service without a cluster (no informer: nothing but what each request carries), as
 * the README's tour and a kube-scheduler with {@code nodeCacheCapable: false} use it.
 */
class ExtenderServiceTest {
  private final PolicyStore policies = new PolicyStore();
  private final GpuLedger ledger = new GpuLedger();
  private final WorkloadLearner learner = new WorkloadLearner(Clock.systemUTC(), () -> Duration.ofHours(1));
  private final ExtenderService service;

  ExtenderServiceTest() {
    var decider = new PlacementDecider(ledger, policies::current, learner);
    var gangs = new GangRegistry(policies::current);
    var gate = new GangGate(gangs, new GangPlanning(decider, ledger, List::of, gangs), policies::current, Duration.ofMinutes(1));
    service = Services.withoutPreemption(decider, gate, policies, ledger, learner);
  }

  private static Pod cgpuPod() {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/pod-cgpu-test.yaml")), Pod.class);
    pod.getMetadata().setUid("8c1f0a3e-77b2-4d0e-9f61-5a4b3c2d1e0f");
    return pod;
  }

  private static List<Node> clusterNodes() {
    var out = new ArrayList<Node>();
    for (var item : Fixtures.yamlTree(Fixtures.path("cluster/nodes.yaml")).path("items")) {
      out.add(KubernetesJson.mapper().convertValue(item, Node.class));
    }
    return out;
  }

  @Test
  void nodeObjectsInTheRequestAreJudgedByThePodsNodeSelectionWithoutAnInformer() {
    var args = new ExtenderWire.Args(cgpuPod(), new NodeListBuilder().withItems(clusterNodes()).build(), null);

    var result = service.filter(args);

    assertThat(result.nodes().getItems()).extracting(n -> n.getMetadata().getName())
        .containsExactly("cn-beijing.i-cgpu-v100-a", "cn-beijing.i-cgpu-v100-b");
    assertThat(result.failedNodes()).isEmpty();
    assertThat(result.failedAndUnresolvableNodes())
        .isEqualTo(Map.of(
            "cn-beijing.i-2ze8o1a45qdv5q8a7luz", "its label ack.node.gpu.schedule is \"share\", the pod's nodeSelector asks \"cgpu\"",
            "cn-beijing.i-topo-v100-a", "its label ack.node.gpu.schedule is \"topology\", the pod's nodeSelector asks \"cgpu\"",
            "cn-beijing.i-cpu-a", "no GPUs known on this node (no GPU labels or allocatable GPU resources)"));
    assertThat(service.prioritize(args)).extracting(PlacementDecider.NodeScore::node, PlacementDecider.NodeScore::score)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("cn-beijing.i-2ze8o1a45qdv5q8a7luz", 0),
            org.assertj.core.groups.Tuple.tuple("cn-beijing.i-cgpu-v100-a", 10),
            org.assertj.core.groups.Tuple.tuple("cn-beijing.i-cgpu-v100-b", 9),
            org.assertj.core.groups.Tuple.tuple("cn-beijing.i-topo-v100-a", 0),
            org.assertj.core.groups.Tuple.tuple("cn-beijing.i-cpu-a", 0));
  }

  @Test
  void onlyAskAboutNodesOfThisClusterCountsInFgdsLearnedWorkload() {
    // Warm-up's samples name nodes no ledger knows: nobody's workload.
    service.filter(new ExtenderWire.Args(cgpuPod(), null, List.of("warm-up-gpu-0", "warm-up-gpu-1")));
    assertThat(learner.get().pods()).isZero();

    service.filter(new ExtenderWire.Args(cgpuPod(), new NodeListBuilder().withItems(clusterNodes()).build(), null));
    assertThat(learner.get().pods()).isEqualTo(1);
  }

  /** A cGPU pod of 14 GiB under its own UID, as kube-scheduler sends it. */
  private static Pod cgpuPod(String name) {
    var pod = cgpuPod();
    pod.getMetadata().setName(name);
    pod.getMetadata().setUid("uid-" + name);
    return pod;
  }

  @Test
  void aChoiceKubeSchedulerIsBindingCountsForTheNextPodsAsItsCacheAssumesIt() {
    // Issue 29, item 5. Each cGPU node keeps one 15 GiB GPU free (GPU 0); the others hold 12 GiB.
    var nodes = new NodeListBuilder().withItems(clusterNodes()).build();
    service.filter(new ExtenderWire.Args(cgpuPod("first"), nodes, null));
    for (var node : List.of("cn-beijing.i-cgpu-v100-a", "cn-beijing.i-cgpu-v100-b")) {
      for (var gpu : List.of(1, 2, 3)) {
        ledger.confirm(io.gpuadmission.placement.GpuClaim.bound(node + gpu, "default/held-" + gpu, node, List.of(gpu), 12));
      }
    }
    var names = List.of("cn-beijing.i-cgpu-v100-a", "cn-beijing.i-cgpu-v100-b");

    // first: both nodes pass, prioritize gives a 10; kube-scheduler assumes it there and binds.
    assertThat(service.filter(new ExtenderWire.Args(cgpuPod("first"), null, names)).nodeNames()).isEqualTo(names);
    assertThat(service.prioritize(new ExtenderWire.Args(cgpuPod("first"), null, names)))
        .extracting(PlacementDecider.NodeScore::node, PlacementDecider.NodeScore::score)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("cn-beijing.i-cgpu-v100-a", 10), org.assertj.core.groups.Tuple.tuple("cn-beijing.i-cgpu-v100-b", 9));
    // The next pod, filtered before first's bind arrives: a's free GPU is first's.
    var second = service.filter(new ExtenderWire.Args(cgpuPod("second"), null, names));
    assertThat(second.nodeNames()).containsExactly("cn-beijing.i-cgpu-v100-b");
    assertThat(second.failedNodes()).isEqualTo(Map.of("cn-beijing.i-cgpu-v100-a", "largest free GPU has 3GiB of aliyun.com/gpu-mem, pod needs 14GiB"));
    // One node passed: kube-scheduler skips prioritize and binds second there, so a third finds none.
    assertThat(service.filter(new ExtenderWire.Args(cgpuPod("third"), null, names)).failedNodes()).isEqualTo(Map.of(
        "cn-beijing.i-cgpu-v100-a", "largest free GPU has 3GiB of aliyun.com/gpu-mem, pod needs 14GiB",
        "cn-beijing.i-cgpu-v100-b", "largest free GPU has 3GiB of aliyun.com/gpu-mem, pod needs 14GiB"));
    assertThat(ledger.claim("uid-first").orElseThrow())
        .extracting(c -> c.node(), c -> c.gpus(), c -> c.phase())
        .containsExactly("cn-beijing.i-cgpu-v100-a", List.of(0), io.gpuadmission.placement.GpuClaim.Phase.CHOSEN);

    // first filtered again (its bind failed, kube-scheduler forgot it): its own choice is no obstacle.
    assertThat(service.filter(new ExtenderWire.Args(cgpuPod("first"), null, names)).nodeNames()).containsExactly("cn-beijing.i-cgpu-v100-a");
  }
}
