package io.gpuadmission.validation;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterView;
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
    return cluster(policy, "cluster/nodes.yaml", List.of());
  }

  /** The nodes of {@code file} and {@code more}, as the node inventory maps them. */
  private static ClusterView cluster(GpuPolicy policy, String file, List<GpuNode> more) {
    var nodes = new java.util.ArrayList<GpuNode>();
    Fixtures.nodes(Fixtures.path(file)).forEach(n -> nodes.add(GpuNodeMapper.map(n, policy.nodeLabels())));
    nodes.addAll(more);
    return ClusterView.ofNodes(nodes);
  }

  private ValidationResult workload(String fixture, GpuPolicy policy) {
    var object = Fixtures.yamlTree(Fixtures.path("workloads/" + fixture));
    return workloads.validate(WorkloadKind.DEPLOYMENT, object, "default", policy, cluster(policy), GpuModelCatalog.EMPTY);
  }

  private static ValidationResult pod(String fixture, GpuPolicy policy) {
    return pod(fixture, policy, cluster(policy));
  }

  private static ValidationResult pod(String fixture, GpuPolicy policy, ClusterView cluster) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(fixture)), Pod.class);
    return new PodValidator(new RecentAdmissions(0, System::nanoTime))
        .validate(new PodSubject(pod, pod.getMetadata().getNamespace(), policy, cluster, "pod"), false);
  }

  /** cluster/nodes.yaml with ACK's status.allocatable and a default-pool node default-t4 (2 nvidia.com/gpu). */
  private static ClusterView allocatable(GpuNode... more) {
    return cluster(PolicyParser.builtInDefault(), "cli/cluster-allocatable.yaml", List.of(more));
  }

  private static ValidationResult nvidiaGpus(String count, ClusterView cluster) {
    var tree = (com.fasterxml.jackson.databind.node.ObjectNode) Fixtures.yamlTree(Fixtures.path("validation/pod-nvidia-gpus-3.yaml"));
    ((com.fasterxml.jackson.databind.node.ObjectNode) tree.at("/spec/containers/0/resources/limits")).put("nvidia.com/gpu", count);
    var pod = KubernetesJson.mapper().convertValue(tree, Pod.class);
    return new PodValidator(new RecentAdmissions(0, System::nanoTime))
        .validate(new PodSubject(pod, "default", PolicyParser.builtInDefault(), cluster, "pod"), false);
  }

  @Test
  void countsOnlyNodesWhoseAllocatableOffersTheWholeGpuResourceAsked() {
    for (var count : new String[] {"3", "8", "16"}) {
      assertThat(nvidiaGpus(count, allocatable()).violations())
          .as("nvidia.com/gpu: %s", count)
          .containsExactly(
              new Violation(
                  "feasibility",
                  "spec.containers.resources",
                  "asks " + count + " whole GPUs (nvidia.com/gpu) but the largest node offering nvidia.com/gpu in the cluster has 2"
                      + " (default-t4); ask for at most 2 per pod and spread the job over more pods"));
    }
    assertThat(nvidiaGpus("2", allocatable()).violations()).isEmpty();
  }

  @Test
  void aNodeWhoseAllocatableIsNotKnownCountsByItsPoolAndNeverRefuses() {
    var joining = new GpuNode("gpu-a100-new", Optional.of("A100-SXM4-40GB"), java.util.OptionalLong.of(40960), 8, Optional.empty(), Optional.empty(), Map.of());
    var result = nvidiaGpus("8", allocatable(joining));

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings()).isEmpty();
  }

  @Test
  void warnsWhenNoNodeOffersTheResourceAtAllAsOfAPoolAtZero() {
    // cluster/nodes.yaml has share, cgpu and topology nodes only, and no allocatable: by their pool labels none serves nvidia.com/gpu.
    var result = nvidiaGpus("1", cluster(PolicyParser.builtInDefault()));

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings()).containsExactly("gpu-admission: no GPU node known that offers nvidia.com/gpu; the pod waits until one joins");
  }

  @Test
  void refusesAModelWhoseNodesAllServeAnotherGpuResource() {
    assertThat(pod("validation/pod-v100-nvidia-gpu.yaml", PolicyParser.builtInDefault(), allocatable()).violations())
        .containsExactly(
            new Violation(
                "feasibility",
                "spec.containers.resources",
                "asks 1 nvidia.com/gpu but no node in the cluster with model Tesla-V100-SXM2-16GB offers nvidia.com/gpu (nodes offering"
                    + " it: pool \"default\"; model Tesla-T4); select such nodes (another GPU model or pool), or ask for the GPU resource"
                    + " the selected nodes offer"));
  }

  @Test
  void admitsATopologyPodOnTheNodeThatOffersAliyunGpu() {
    var result = pod("cluster/gang-master.yaml", PolicyParser.builtInDefault(), allocatable());

    assertThat(result.violations()).extracting(Violation::rule).doesNotContain("feasibility");
  }

  @Test
  void refusesAMinimumGpuMemoryNoModelHas() {
    assertThat(pod("validation/pod-min-gpu-memory-32gi.yaml", PolicyParser.builtInDefault()).violations())
        .containsExactly(
            new Violation(
                "feasibility",
                "metadata.annotations.gpu-admission.io/min-gpu-memory",
                "asks gpu-admission.io/min-gpu-memory 32Gi but no GPU model in the cluster has that much per GPU (the most:"
                    + " Tesla-V100-SXM2-16GB, 16130MiB); lower it or remove the annotation"));
  }

  /** The 32Gi fixture pod selecting models itself: nodeSelector {@code model}, or required node affinity In {@code models}. */
  private static ValidationResult minimumWithModels(String minimum, GpuPolicy policy, String... models) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("validation/pod-min-gpu-memory-32gi.yaml")), Pod.class);
    pod.getMetadata().getAnnotations().put("gpu-admission.io/min-gpu-memory", minimum);
    if (models.length == 1) {
      pod.getSpec().setNodeSelector(Map.of("aliyun.accelerator/nvidia_name", models[0]));
    } else {
      io.gpuadmission.pod.NodeAffinityEditor.requireEverywhere(
          pod, io.gpuadmission.pod.NodeAffinityEditor.requirement("aliyun.accelerator/nvidia_name", "In", List.of(models)));
    }
    return new PodValidator(new RecentAdmissions(0, System::nanoTime))
        .validate(new PodSubject(pod, "default", policy, cluster(policy), "pod"), false);
  }

  @Test
  void refusesAMinimumGpuMemoryTheSelectedModelLacks() {
    assertThat(minimumWithModels("16Gi", PolicyParser.builtInDefault(), "Tesla-M40").violations())
        .containsExactly(
            new Violation(
                "feasibility",
                "metadata.annotations.gpu-admission.io/min-gpu-memory",
                "asks gpu-admission.io/min-gpu-memory 16Gi but the GPU model it selects (aliyun.accelerator/nvidia_name), Tesla-M40,"
                    + " has 12209MiB per GPU; select a model that has it (Tesla-V100-SXM2-16GB) or lower the minimum"));
    assertThat(minimumWithModels("32Gi", PolicyParser.builtInDefault(), "Tesla-M40", "Tesla-V100-SXM2-16GB").violations())
        .extracting(Violation::message)
        .containsExactly(
            "asks gpu-admission.io/min-gpu-memory 32Gi but the GPU models it selects (aliyun.accelerator/nvidia_name), Tesla-M40"
                + " (12209MiB per GPU) and Tesla-V100-SXM2-16GB (16130MiB per GPU), have less; no GPU model in the cluster has that much"
                + " (the most: Tesla-V100-SXM2-16GB, 16130MiB); lower it or remove the annotation");
  }

  @Test
  void admitsAMinimumOneSelectedModelHasOrThatNoKnownNodeCanTell() {
    assertThat(minimumWithModels("16Gi", PolicyParser.builtInDefault(), "Tesla-M40", "Tesla-V100-SXM2-16GB").violations()).isEmpty();
    assertThat(minimumWithModels("16Gi", PolicyParser.builtInDefault(), "Tesla-V100-SXM2-16GB").violations()).isEmpty();
    // A model no node has now: its memory is not known (the model check refuses the nodeSelector, not the minimum).
    assertThat(minimumWithModels("16Gi", PolicyParser.builtInDefault(), "Tesla-M40", "A100-SXM4-80GB").violations()).isEmpty();
  }

  @Test
  void onlyWarnsOfAMinimumTheSelectedModelLacksWhenThePolicySaysWarn() {
    var result = minimumWithModels("16Gi", policy("feasibility:\n  onInfeasible: warn\n"), "Tesla-M40");

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings()).containsExactly(
        "gpu-admission: asks gpu-admission.io/min-gpu-memory 16Gi but the GPU model it selects (aliyun.accelerator/nvidia_name),"
            + " Tesla-M40, has 12209MiB per GPU; select a model that has it (Tesla-V100-SXM2-16GB) or lower the minimum (admitted as"
            + " policy feasibility.onInfeasible is warn: it stays Pending until a node can take it)");
  }

  /** The 16Gi fixture pod naming {@code model} in its annotation, as /mutate passes it on: pinned to that model by nodeSelector. */
  private static ValidationResult namedModelWithMinimum(String model, GpuPolicy policy) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("validation/pod-min-gpu-memory-32gi.yaml")), Pod.class);
    pod.getMetadata().getAnnotations().put("gpu-admission.io/min-gpu-memory", "16Gi");
    pod.getMetadata().getAnnotations().put("gpu-admission.io/gpu-model", model);
    pod.getSpec().setNodeSelector(Map.of("aliyun.accelerator/nvidia_name", model));
    return new PodValidator(new RecentAdmissions(0, System::nanoTime))
        .validate(new PodSubject(pod, "default", policy, cluster(policy), "pod"), false);
  }

  private static final String NAMED_MODEL_LACKS_MINIMUM =
      "asks gpu-admission.io/min-gpu-memory 16Gi but the GPU model it names (gpu-admission.io/gpu-model), Tesla-M40, has 12209MiB"
          + " per GPU; name a model that has it (Tesla-V100-SXM2-16GB) or lower the minimum";

  @Test
  void refusesAMinimumGpuMemoryTheModelThePodNamesLacks() {
    assertThat(namedModelWithMinimum("Tesla-M40", PolicyParser.builtInDefault()).violations())
        .containsExactly(new Violation("feasibility", "metadata.annotations.gpu-admission.io/min-gpu-memory", NAMED_MODEL_LACKS_MINIMUM));

    var warned = namedModelWithMinimum("Tesla-M40", policy("feasibility:\n  onInfeasible: warn\n"));
    assertThat(warned.violations()).isEmpty();
    assertThat(warned.warnings()).containsExactly("gpu-admission: " + NAMED_MODEL_LACKS_MINIMUM
        + " (admitted as policy feasibility.onInfeasible is warn: it stays Pending until a node can take it)");

    assertThat(namedModelWithMinimum("Tesla-V100-SXM2-16GB", PolicyParser.builtInDefault()).violations())
        .extracting(Violation::path).doesNotContain("metadata.annotations.gpu-admission.io/min-gpu-memory");
  }

  @Test
  void aNamespaceDefaultWithLessMemoryGivesWayToThePodsMinimumAtApply() {
    var policy = policy("gpuModel:\n  namespaceDefaults:\n    default: Tesla-M40\n");
    var deployment = Fixtures.yamlTree(Fixtures.path("workloads/deployment-min-gpu-memory-16gi.yaml"));
    var cluster = cluster(policy);
    var models = GpuModelCatalog.of(cluster.nodes());

    var result = workloads.validate(WorkloadKind.DEPLOYMENT, deployment, "default", policy, cluster, models);

    assertThat(result.violations()).extracting(Violation::path).doesNotContain("metadata.annotations.gpu-admission.io/min-gpu-memory");
    assertThat(result.warnings()).startsWith(
        "gpu-admission: pods will get: namespace default's default GPU model Tesla-M40 has 12209MiB per GPU, less than the pod's"
            + " min-gpu-memory 16Gi; the models that have the minimum are selected instead",
        "gpu-admission: pods will get: node affinity aliyun.accelerator/nvidia_name In Tesla-V100-SXM2-16GB (at least 16Gi per GPU)");
  }

  /** A pod asking one nvidia.com/gpu of model {@code model} by nodeSelector. */
  private static ValidationResult modelPod(String model, GpuPolicy policy) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("validation/pod-min-gpu-memory-32gi.yaml")), Pod.class);
    pod.getMetadata().setAnnotations(null);
    pod.getSpec().setNodeSelector(Map.of("aliyun.accelerator/nvidia_name", model));
    return new PodValidator(new RecentAdmissions(0, System::nanoTime))
        .validate(new PodSubject(pod, "default", policy, cluster(policy), "pod"), false);
  }

  @Test
  void refusesAModelNoNodeHasUnlessThePolicyListsItsPoolAsScalingFromZero() {
    assertThat(modelPod("A100-SXM4-80GB", PolicyParser.builtInDefault()).violations())
        .containsExactly(
            new Violation(
                "feasibility",
                "spec.nodeSelector.aliyun.accelerator/nvidia_name",
                "asks GPU model \"A100-SXM4-80GB\" but no node has it (known models: Tesla-M40, Tesla-V100-SXM2-16GB); use one of those,"
                    + " or, if its node pool scales from zero, list it in policy feasibility.scaleFromZeroModels"));

    var warning = "gpu-admission: asks GPU model \"A100-SXM4-80GB\", which no node has now; admitted as policy"
        + " feasibility.scaleFromZeroModels lists it (a node pool that scales from zero): it stays Pending until the cluster"
        + " autoscaler adds such a node";
    for (var listed : new String[] {"[A100-SXM4-80GB]", "[\"*\"]"}) {
      var result = modelPod("A100-SXM4-80GB", policy("feasibility:\n  scaleFromZeroModels: " + listed + "\n"));
      assertThat(result.violations()).as(listed).isEmpty();
      assertThat(result.warnings()).as(listed).containsExactly(warning);
    }
    // Another model stays refused: a typo is not a pool at zero.
    assertThat(modelPod("A100-SXM4-40GB", policy("feasibility:\n  scaleFromZeroModels: [A100-SXM4-80GB]\n")).violations())
        .extracting(Violation::rule).containsExactly("feasibility");
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
