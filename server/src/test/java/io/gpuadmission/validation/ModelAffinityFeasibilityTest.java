package io.gpuadmission.validation;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A GPU model asked by required node affinity is judged as one asked by nodeSelector: a pod none
 * of whose terms can match a model of the fixture cluster (src/test/resources/cluster/nodes.yaml:
 * Tesla-M40, Tesla-V100-SXM2-16GB) can never be scheduled.
 */
class ModelAffinityFeasibilityTest {
  private static final String LABEL = "aliyun.accelerator/nvidia_name";
  private static final String PATH = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  private static final String KNOWN = " (known models: Tesla-M40, Tesla-V100-SXM2-16GB); use one of those, or, if its node pool scales"
      + " from zero, list it in policy feasibility.scaleFromZeroModels";

  private static GpuPolicy policy(String text) {
    try {
      return PolicyParser.parse(text);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static ClusterView cluster(GpuPolicy policy, boolean withNodes) {
    var nodes = new ArrayList<GpuNode>();
    if (withNodes) {
      Fixtures.nodes(Fixtures.path("cluster/nodes.yaml")).forEach(n -> nodes.add(GpuNodeMapper.map(n, policy.nodeLabels())));
    }
    return ClusterView.ofNodes(nodes);
  }

  private static NodeSelectorRequirement on(String key, String operator, String... values) {
    var requirement = new NodeSelectorRequirement();
    requirement.setKey(key);
    requirement.setOperator(operator);
    requirement.setValues(values.length == 0 ? null : List.of(values));
    return requirement;
  }

  private static NodeSelectorTerm term(NodeSelectorRequirement... expressions) {
    var term = new NodeSelectorTerm();
    term.setMatchExpressions(List.of(expressions));
    return term;
  }

  /** A pod asking {@code resource} (one of it) with these required node affinity terms. */
  private static Pod pod(String resource, NodeSelectorTerm... terms) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("validation/pod-min-gpu-memory-32gi.yaml")), Pod.class);
    pod.getMetadata().setAnnotations(null);
    pod.getSpec().getContainers().get(0).getResources().setLimits(Map.of(resource, new io.fabric8.kubernetes.api.model.Quantity("1")));
    pod.getSpec().setAffinity(new io.fabric8.kubernetes.api.model.AffinityBuilder().withNewNodeAffinity()
        .withNewRequiredDuringSchedulingIgnoredDuringExecution().withNodeSelectorTerms(terms).endRequiredDuringSchedulingIgnoredDuringExecution()
        .endNodeAffinity().build());
    return pod;
  }

  private static ValidationResult validate(Pod pod, GpuPolicy policy, boolean withNodes) {
    return new PodValidator(new RecentAdmissions(0, System::nanoTime))
        .validate(new PodSubject(pod, "default", policy, cluster(policy, withNodes), "pod"), false);
  }

  private static ValidationResult validate(NodeSelectorTerm... terms) {
    return validate(pod("nvidia.com/gpu", terms), PolicyParser.builtInDefault(), true);
  }

  private static List<Violation> modelRefusals(ValidationResult result) {
    return result.violations().stream().filter(v -> v.path().equals(PATH)).toList();
  }

  @Test
  void refusesAModelNoNodeHasInAnInList() {
    assertThat(validate(term(on(LABEL, "In", "A100-SXM4-80GB"))).violations())
        .containsExactly(new Violation("feasibility", PATH, "asks GPU model \"A100-SXM4-80GB\" by required node affinity but no node has it" + KNOWN));
    assertThat(validate(term(on("topology.kubernetes.io/zone", "In", "cn-beijing-a"), on(LABEL, "In", "H100-SXM5-80GB", "A100-SXM4-80GB")),
            term(on(LABEL, "In", "L40S"))).violations())
        .containsExactly(new Violation("feasibility", PATH,
            "asks GPU models \"A100-SXM4-80GB\", \"H100-SXM5-80GB\" or \"L40S\" by required node affinity but no node has any of them" + KNOWN));
  }

  @Test
  void refusesTermsWhoseNotInExistsOrDoesNotExistLeaveNoKnownModel() {
    assertThat(validate(term(on(LABEL, "NotIn", "Tesla-M40", "Tesla-V100-SXM2-16GB"))).violations())
        .containsExactly(new Violation("feasibility", PATH,
            "asks by required node affinity (aliyun.accelerator/nvidia_name NotIn [Tesla-M40, Tesla-V100-SXM2-16GB]) a GPU model no node has"
                + KNOWN));
    assertThat(validate(term(on(LABEL, "DoesNotExist")), term(on(LABEL, "In", "Tesla-M40"), on(LABEL, "NotIn", "Tesla-M40"))).violations())
        .extracting(Violation::message)
        .containsExactly("asks by required node affinity (aliyun.accelerator/nvidia_name DoesNotExist; or aliyun.accelerator/nvidia_name In"
            + " [Tesla-M40] and aliyun.accelerator/nvidia_name NotIn [Tesla-M40]) a GPU model no node has" + KNOWN);
  }

  @Test
  void admitsWhenOneTermCanMatchAKnownModelOrLeavesTheModelOpen() {
    assertThat(modelRefusals(validate(term(on(LABEL, "In", "A100-SXM4-80GB")), term(on(LABEL, "In", "Tesla-M40"))))).isEmpty();
    assertThat(modelRefusals(validate(term(on(LABEL, "NotIn", "Tesla-M40"))))).isEmpty();
    assertThat(modelRefusals(validate(term(on(LABEL, "Exists"))))).isEmpty();
    assertThat(modelRefusals(validate(term(on(LABEL, "In", "A100-SXM4-80GB")), term(on("topology.kubernetes.io/zone", "In", "cn-beijing-a")))))
        .isEmpty();
  }

  @Test
  void admitsAModelAPoolAtZeroMayBringWithAWarning() {
    var result = validate(pod("nvidia.com/gpu", term(on(LABEL, "In", "A100-SXM4-80GB", "H100-SXM5-80GB"))),
        policy("feasibility:\n  scaleFromZeroModels: [A100-SXM4-80GB]\n"), true);
    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings()).containsExactly(
        "gpu-admission: asks GPU models \"A100-SXM4-80GB\" or \"H100-SXM5-80GB\" by required node affinity, which no node has now; admitted"
            + " as policy feasibility.scaleFromZeroModels lists A100-SXM4-80GB (a node pool that scales from zero): it stays Pending until"
            + " the cluster autoscaler adds such a node");

    var single = validate(pod("nvidia.com/gpu", term(on(LABEL, "In", "A100-SXM4-80GB"))),
        policy("feasibility:\n  scaleFromZeroModels: [\"*\"]\n"), true);
    assertThat(single.violations()).isEmpty();
    assertThat(single.warnings()).containsExactly(
        "gpu-admission: asks GPU model \"A100-SXM4-80GB\" by required node affinity, which no node has now; admitted as policy"
            + " feasibility.scaleFromZeroModels lists it (a node pool that scales from zero): it stays Pending until the cluster autoscaler"
            + " adds such a node");

    var other = validate(pod("nvidia.com/gpu", term(on(LABEL, "NotIn", "Tesla-M40", "Tesla-V100-SXM2-16GB"))),
        policy("feasibility:\n  scaleFromZeroModels: [\"*\"]\n"), true);
    assertThat(other.violations()).isEmpty();
    assertThat(other.warnings()).containsExactly(
        "gpu-admission: asks by required node affinity (aliyun.accelerator/nvidia_name NotIn [Tesla-M40, Tesla-V100-SXM2-16GB]) a GPU model"
            + " no node has now; admitted as policy feasibility.scaleFromZeroModels lists such a model (a node pool that scales from zero):"
            + " it stays Pending until the cluster autoscaler adds such a node");

    // Another model stays refused: a typo is not a pool at zero.
    assertThat(modelRefusals(validate(pod("nvidia.com/gpu", term(on(LABEL, "In", "A100-SXM4-40GB"))),
        policy("feasibility:\n  scaleFromZeroModels: [A100-SXM4-80GB]\n"), true))).hasSize(1);
  }

  @Test
  void refusesANodeSelectorModelItsRequiredAffinityExcludesWhateverNodesThereAre() {
    var both = pod("nvidia.com/gpu", term(on(LABEL, "In", "Tesla-V100-SXM2-16GB")));
    both.getSpec().setNodeSelector(Map.of(LABEL, "Tesla-M40"));
    assertThat(modelRefusals(validate(both, PolicyParser.builtInDefault(), true))).containsExactly(new Violation("feasibility", PATH,
        "asks GPU model \"Tesla-M40\" by nodeSelector, which its required node affinity (aliyun.accelerator/nvidia_name In"
            + " [Tesla-V100-SXM2-16GB]) excludes: no node can match both; make them agree or drop one"));

    // A model a pool at zero may bring is no excuse: the two still cannot both hold.
    var scaling = pod("nvidia.com/gpu", term(on(LABEL, "NotIn", "A100-SXM4-80GB")));
    scaling.getSpec().setNodeSelector(Map.of(LABEL, "A100-SXM4-80GB"));
    assertThat(modelRefusals(validate(scaling, policy("feasibility:\n  scaleFromZeroModels: [A100-SXM4-80GB]\n"), true)))
        .extracting(Violation::message).containsExactly("asks GPU model \"A100-SXM4-80GB\" by nodeSelector, which its required node affinity"
            + " (aliyun.accelerator/nvidia_name NotIn [A100-SXM4-80GB]) excludes: no node can match both; make them agree or drop one");

    // Nor is a cluster with no GPU node known yet: the two cannot both hold on any node.
    assertThat(modelRefusals(validate(both, PolicyParser.builtInDefault(), false))).hasSize(1);

    // When they agree, or a term leaves the model open, nothing is said here.
    var agreeing = pod("nvidia.com/gpu", term(on(LABEL, "In", "Tesla-M40", "Tesla-V100-SXM2-16GB")));
    agreeing.getSpec().setNodeSelector(Map.of(LABEL, "Tesla-M40"));
    assertThat(modelRefusals(validate(agreeing, PolicyParser.builtInDefault(), true))).isEmpty();
    var open = pod("nvidia.com/gpu", term(on(LABEL, "In", "Tesla-V100-SXM2-16GB")), term(on("topology.kubernetes.io/zone", "In", "cn-beijing-a")));
    open.getSpec().setNodeSelector(Map.of(LABEL, "Tesla-M40"));
    assertThat(modelRefusals(validate(open, PolicyParser.builtInDefault(), true))).isEmpty();
  }

  @Test
  void onlyWarnsWhenThePolicySaysWarn() {
    var result = validate(pod("aliyun.com/gpu-mem", term(on(LABEL, "In", "A100-SXM4-80GB"))), policy("feasibility:\n  onInfeasible: warn\n"), true);

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings()).containsExactly(
        "gpu-admission: asks GPU model \"A100-SXM4-80GB\" by required node affinity but no node has it" + KNOWN
            + " (admitted as policy feasibility.onInfeasible is warn: it stays Pending until a node can take it)");
  }

  @Test
  void cannotTellWithNoGpuNodeKnownAndLeavesCpuPodsAlone() {
    var unknown = validate(pod("nvidia.com/gpu", term(on(LABEL, "In", "A100-SXM4-80GB"))), PolicyParser.builtInDefault(), false);
    assertThat(unknown.violations()).isEmpty();
    assertThat(unknown.warnings()).containsExactly("gpu-admission: no GPU nodes known yet; could not check that this pod fits a node");

    // The CPU rule writes DoesNotExist into CPU pods' terms: they run on nodes without a GPU model.
    assertThat(validate(pod("cpu", term(on(LABEL, "DoesNotExist"))), PolicyParser.builtInDefault(), true).violations()).isEmpty();
  }

  @Test
  void refusesAMinimumNoModelHasBesideAffinityThatLeavesTheModelOpen() {
    var pod = pod("nvidia.com/gpu", term(on(LABEL, "Exists")));
    pod.getMetadata().setAnnotations(Map.of("gpu-admission.io/min-gpu-memory", "32Gi"));

    assertThat(validate(pod, PolicyParser.builtInDefault(), true).violations())
        .containsExactly(new Violation("feasibility", "metadata.annotations.gpu-admission.io/min-gpu-memory",
            "asks gpu-admission.io/min-gpu-memory 32Gi but no GPU model in the cluster has that much per GPU (the most: Tesla-V100-SXM2-16GB,"
                + " 16130MiB); lower it or remove the annotation"));
  }

  @Test
  void refusesAWorkloadTemplateAskingAModelNoNodeHas() {
    var workloads = new WorkloadValidator(new PodMutator(PodMutator.standardRules(), KubernetesJson.mapper()), KubernetesJson.mapper());
    var policy = PolicyParser.builtInDefault();
    var deployment = Fixtures.yamlTree(Fixtures.path("workloads/deployment-model-affinity-a100-80gb.yaml"));

    var result = workloads.validate(WorkloadKind.DEPLOYMENT, deployment, "default", policy, cluster(policy, true), GpuModelCatalog.EMPTY);

    assertThat(result.violations())
        .containsExactly(new Violation("feasibility", PATH, "asks GPU model \"A100-SXM4-80GB\" by required node affinity but no node has it" + KNOWN));
  }
}
