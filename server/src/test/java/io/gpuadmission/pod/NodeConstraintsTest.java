package io.gpuadmission.pod;

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

  private String refusal(String specYaml, Node node) {
    var spec = KubernetesJson.mapper().convertValue(Fixtures.yamlTreeOf(specYaml), PodSpec.class);
    return NodeConstraints.of(spec).refusal(node).orElse("");
  }

  private Node node(String name) {
    return nodes.stream().filter(n -> n.getMetadata().getName().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void saysWhyANodeIsRefused() {
    assertThat(refusal("nodeSelector: {ack.node.gpu.schedule: topology}", node("dgx1-share-pool")))
        .isEqualTo("its label ack.node.gpu.schedule is \"share\", the pod's nodeSelector asks \"topology\"");
    assertThat(refusal("nodeSelector: {gpu-team: a}", node("dgx1-a"))).isEqualTo("it has no label gpu-team, the pod's nodeSelector asks \"a\"");
    assertThat(refusal("""
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: aliyun.accelerator/nvidia_name, operator: In, values: [NVIDIA-H100-80GB-HBM3]}
        """, node("dgx1-a"))).isEqualTo("it matches no term of the pod's required node affinity");
    assertThat(refusal("{}", node("dgx1-cordoned"))).isEqualTo("it is cordoned (unschedulable)");
    var tainted = node("dgx1-a").toBuilder().editOrNewSpec().addNewTaint().withKey("nvidia.com/gpu").withValue("present")
        .withEffect("NoSchedule").endTaint().endSpec().build();
    assertThat(refusal("{}", tainted)).isEqualTo("it has taint nvidia.com/gpu=present:NoSchedule, which the pod does not tolerate");
    assertThat(refusal("tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]", tainted)).isEmpty();
    assertThat(refusal("nodeSelector: {ack.node.gpu.schedule: topology}", node("dgx1-a"))).isEmpty();
  }
}
