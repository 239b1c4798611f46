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
}
