package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.bench.ScaleCluster;
import io.gpuadmission.policy.PolicyParser;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The stores' reduced copies share what is alike between them (empty collections, resource
 * amounts) and still read and serialize as before.
 */
class SharedPartsTest {
  private static final ScaleCluster CLUSTER = new ScaleCluster(2, 4, 2, 40);

  private static Node node(int n) throws Exception {
    return KubernetesJson.mapper().readValue(CLUSTER.node(n), Node.class);
  }

  private static Pod pod(int p) throws Exception {
    return KubernetesJson.mapper().readValue(CLUSTER.pod(p), Pod.class);
  }

  @Test
  void twoNodesOfTheSameShapeShareTheirResourceMapsAndEmptyCollections() throws Exception {
    var source = node(0);
    var capacity = Map.copyOf(source.getStatus().getCapacity());
    var a = NodeFields.strip(source);
    var b = NodeFields.strip(node(1));

    assertThat(a.getMetadata().getName()).isEqualTo("gpu-node-00000");
    assertThat(b.getMetadata().getName()).isEqualTo("gpu-node-00001");
    assertThat(a.getStatus().getCapacity()).isSameAs(b.getStatus().getCapacity()).isEqualTo(capacity);
    assertThat(a.getStatus().getAllocatable()).isSameAs(b.getStatus().getAllocatable());
    assertThat(a.getStatus().getCapacity().get("aliyun.com/gpu-mem")).isEqualTo(new Quantity("128"));
    assertThat(a.getMetadata().getFinalizers()).isSameAs(b.getMetadata().getFinalizers()).isSameAs(List.of());
    assertThat(a.getMetadata().getAdditionalProperties()).isSameAs(Map.of());
    assertThat(a.getStatus().getImages()).isSameAs(List.of());
    // Labels differ per node (its host name): each keeps its own.
    assertThat(a.getMetadata().getLabels()).isNotSameAs(b.getMetadata().getLabels()).containsEntry("kubernetes.io/hostname", "gpu-node-00000");
    // Shared, so not to be changed through one node.
    assertThatThrownBy(() -> a.getStatus().getCapacity().put("cpu", new Quantity("1"))).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void gpuPodsOfTheSameAskShareTheirContainersResourceMaps() throws Exception {
    var policy = PolicyParser.builtInDefault();
    var a = BoundPods.strip(pod(0), policy);
    var b = BoundPods.strip(pod(1), policy);

    var limitsA = a.getSpec().getContainers().get(0).getResources().getLimits();
    assertThat(limitsA).isSameAs(b.getSpec().getContainers().get(0).getResources().getLimits());
    assertThat(limitsA).containsEntry("aliyun.com/gpu-mem", new Quantity("4"));
    assertThat(a.getSpec().getVolumes()).isSameAs(List.of());
    assertThat(a.getSpec().getContainers().get(0).getEnv()).isSameAs(List.of());
    assertThat(a.getMetadata().getUid()).isNotEqualTo(b.getMetadata().getUid());
  }

  @Test
  void aSharedCopySerializesAsTheUnsharedOneDid() throws Exception {
    var pod = pod(0);
    var json = KubernetesJson.mapper().readTree(KubernetesJson.mapper().writeValueAsString(BoundPods.strip(pod, PolicyParser.builtInDefault())));

    assertThat(json.at("/spec/containers/0/resources/limits/aliyun.com~1gpu-mem").asText()).isEqualTo("4");
    assertThat(json.at("/spec/containers/0").has("env")).isFalse();
    assertThat(json.at("/metadata").has("finalizers")).isFalse();
    assertThat(json.at("/metadata/name").asText()).isEqualTo(pod.getMetadata().getName());
  }
}
