package io.gpuadmission.validation;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.cluster.GpuNode;
import io.gpuadmission.cluster.GpuNodeMapper;
import io.gpuadmission.mutation.PodMutator;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Requests no node of the cluster (src/test/resources/cluster/nodes.yaml) can ever take are told
 * at apply, for pods and for workload templates alike, with the fix.
 */
class UnschedulableRequestTest {
  private static final String MIXED =
      " ask GPUs of two kinds, but a node serves one kind only: GPU-memory shares (aliyun.com/gpu-mem), whole GPUs"
          + " (nvidia.com/gpu) or, in the topology pool, aliyun.com/gpu; ACK gives each GPU node one scheduling mode and sets"
          + " the other modes' resources to 0, so no node can run this pod: ask the same kind in every container, or split it"
          + " into two pods";
  private static final String SPREAD =
      "selects ack.node.gpu.placement=spread (the policy's sharedMemory.placement) but no GPU node in pool \"cgpu\" carries it"
          + " (there: binpack on 2 nodes); label the pool's nodes ack.node.gpu.placement=spread, set sharedMemory.placement"
          + " to a placement the pool has or to null, or choose one with nodeSelector ack.node.gpu.placement: binpack";

  private final WorkloadValidator workloads =
      new WorkloadValidator(new PodMutator(PodMutator.standardRules(), KubernetesJson.mapper()), KubernetesJson.mapper());

  private static GpuPolicy policy(String text) {
    try {
      return PolicyParser.parse(text);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static GpuPolicy spread() {
    return policy(Fixtures.text(Fixtures.path("validation/policy-placement-spread.yaml")));
  }

  /** The fixture cluster's nodes, as the node inventory maps them. */
  private static ClusterView cluster(GpuPolicy policy) {
    var nodes = Fixtures.nodes(Fixtures.path("cluster/nodes.yaml")).stream().map(n -> GpuNodeMapper.map(n, policy.nodeLabels())).toList();
    return new ClusterView() {
      @Override
      public List<GpuNode> nodes() {
        return nodes;
      }

      @Override
      public List<Pod> gangPods(String namespace, String label) {
        return List.of();
      }

      @Override
      public Optional<Map<String, String>> namespaceLabels(String namespace) {
        return Optional.empty();
      }
    };
  }

  private ValidationResult workload(String fixture, GpuPolicy policy) {
    var object = Fixtures.yamlTree(Fixtures.path("workloads/" + fixture));
    return workloads.validate(WorkloadKind.DEPLOYMENT, object, "default", policy, cluster(policy), GpuModelCatalog.EMPTY);
  }

  private static ValidationResult pod(String fixture, GpuPolicy policy) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(fixture)), Pod.class);
    return new PodValidator(new RecentAdmissions(0, System::nanoTime))
        .validate(new PodSubject(pod, "default", policy, cluster(policy), "pod"), false);
  }

  @Test
  void refusesATemplateWhoseContainersAskASharedGpuAndAWholeOne() {
    var result = workload("deployment-share-and-whole-gpus-across-containers.yaml", PolicyParser.builtInDefault());

    assertThat(result.violations())
        .containsExactly(
            new Violation(
                "mixed-gpu-resources",
                "spec.containers",
                "containers \"server\" (aliyun.com/gpu-mem) and \"trainer\" (nvidia.com/gpu)" + MIXED));
  }

  @Test
  void refusesAPodWhoseInitContainerAsksAWholeGpuBeforeAShare() {
    assertThat(pod("validation/pod-init-nvidia-main-share.yaml", PolicyParser.builtInDefault()).violations())
        .extracting(Violation::message)
        .containsExactly("init container \"calibrate\" (nvidia.com/gpu) and container \"serve\" (aliyun.com/gpu-mem)" + MIXED);
  }

  @Test
  void refusesSharePodsSentToAPlacementNoNodeOfTheirPoolHas() {
    var result = workload("deployment-share-notebook.yaml", spread());

    assertThat(result.violations())
        .containsExactly(new Violation("feasibility", "spec.nodeSelector.ack.node.gpu.placement", SPREAD));
  }

  @Test
  void onlyWarnsOfAnInfeasiblePodWhenThePolicySaysWarn() {
    var policy = policy(Fixtures.text(Fixtures.path("validation/policy-placement-spread.yaml")) + "feasibility:\n  onInfeasible: warn\n");

    var result = workload("deployment-share-notebook.yaml", policy);

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings())
        .contains("gpu-admission: " + SPREAD + " (admitted as policy feasibility.onInfeasible is warn: it stays Pending until a node can take it)");
  }

  @Test
  void anInitContainersShareMustFitOneGpu() {
    assertThat(pod("validation/pod-init-share-16g.yaml", PolicyParser.builtInDefault()).violations())
        .extracting(Violation::message)
        .containsExactly(
            "asks aliyun.com/gpu-mem=16 but the largest GPU in pool \"cgpu\" has 15 (Tesla-V100-SXM2-16GB, 16130MiB);"
                + " a GPU-memory share is placed on one GPU: ask for at most 15");
  }

  @Test
  void warnsThatGpusharesDevicePluginGivesAnInitContainerNoGpu() {
    var result = pod("validation/pod-init-share-16g.yaml", PolicyParser.builtInDefault());

    assertThat(result.warnings())
        .containsExactly(
            "gpu-admission: gpushare's device plugin gives the GPU chosen for a pod to one container only, the first (init"
                + " containers first) whose aliyun.com/gpu-mem equals the sum over the pod's regular containers (4): on a node"
                + " with more than one GPU, init container \"convert\" starts without a GPU; ask aliyun.com/gpu-mem in one"
                + " regular container only");
  }

  @Test
  void doesNotWarnOfTheOneContainerAskingTheShare() {
    var result = workload("deployment-share-notebook.yaml", PolicyParser.builtInDefault());

    assertThat(result.warnings()).noneMatch(w -> w.contains("device plugin"));
  }
}
