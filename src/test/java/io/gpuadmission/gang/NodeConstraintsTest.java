package io.gpuadmission.gang;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which nodes a gang member may be planned on, as kube-scheduler's NodeAffinity and TaintToleration would judge them. */
class NodeConstraintsTest {
  private final List<Node> nodes = Fixtures.nodes(Fixtures.path("gang/nodes.yaml"));

  private List<String> admitted(String specYaml) {
    var spec = KubernetesJson.mapper().convertValue(Fixtures.yamlTreeOf(specYaml), PodSpec.class);
    var constraints = NodeConstraints.of(spec);
    return nodes.stream().filter(constraints::admits).map(n -> n.getMetadata().getName()).toList();
  }

  @Test
  void nodeSelectorAndCordon() {
    assertThat(admitted("nodeSelector: {ack.node.gpu.schedule: topology}")).containsExactly("dgx1-a", "dgx1-b", "hgx-h100-a");
    assertThat(admitted("{}")).containsExactly("dgx1-a", "dgx1-b", "hgx-h100-a", "dgx1-share-pool");
  }

  @Test
  void toleratingTheCordonTaintAdmitsTheCordonedNode() {
    assertThat(admitted("""
        nodeSelector: {ack.node.gpu.schedule: topology}
        tolerations:
        - {key: node.kubernetes.io/unschedulable, operator: Exists, effect: NoSchedule}
        """)).containsExactly("dgx1-a", "dgx1-b", "hgx-h100-a", "dgx1-cordoned");
    assertThat(admitted("tolerations: [{operator: Exists}]")).hasSize(5);
  }

  @Test
  void requiredNodeAffinityTermsAreOredAndTheirExpressionsAnded() {
    assertThat(admitted("""
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: aliyun.accelerator/nvidia_name, operator: In, values: [Tesla-V100-SXM2-16GB]}
                - {key: ack.node.gpu.schedule, operator: NotIn, values: [share]}
              - matchFields:
                - {key: metadata.name, operator: In, values: [hgx-h100-a]}
        """)).containsExactly("dgx1-a", "dgx1-b", "hgx-h100-a");
    assertThat(admitted("""
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: aliyun.accelerator/nvidia_count, operator: Gt, values: ["7"]}
                - {key: ack.node.gpu.placement, operator: DoesNotExist}
                - {key: aliyun.accelerator/nvidia_mem, operator: Exists}
                - {key: aliyun.accelerator/nvidia_name, operator: NotIn, values: [NVIDIA-H100-80GB-HBM3]}
        """)).containsExactly("dgx1-a", "dgx1-b", "dgx1-share-pool");
    assertThat(admitted("""
        affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{}]}}}
        """)).isEmpty();
  }

  @Test
  void refusalsAreKubeSchedulersReasons() {
    var spec = KubernetesJson.mapper().convertValue(Fixtures.yamlTreeOf("nodeSelector: {ack.node.gpu.schedule: topology}"), PodSpec.class);
    var constraints = NodeConstraints.of(spec);
    var byName = new java.util.TreeMap<String, String>();
    nodes.forEach(n -> byName.put(n.getMetadata().getName(), constraints.refusal(n).orElse("")));

    assertThat(byName)
        .containsExactly(
            java.util.Map.entry("dgx1-a", ""),
            java.util.Map.entry("dgx1-b", ""),
            java.util.Map.entry("dgx1-cordoned", "node(s) were unschedulable"),
            java.util.Map.entry("dgx1-share-pool", "node(s) didn't match Pod's node affinity/selector"),
            java.util.Map.entry("hgx-h100-a", ""));
    var tainted = new io.fabric8.kubernetes.api.model.NodeBuilder(nodes.get(0))
        .editSpec().withTaints(new io.fabric8.kubernetes.api.model.Taint("NoSchedule", "nvidia.com/gpu", null, "present")).endSpec().build();
    assertThat(constraints.refusal(tainted)).contains("node(s) had untolerated taint {nvidia.com/gpu: present}");
  }
}
