package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerImageBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.gpuadmission.pod.NodeConstraints;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import org.junit.jupiter.api.Test;

class NodeFieldsTest {
  @Test
  void aStrippedNodeMapsAndAdmitsAsTheWholeOneAndDropsTheRest() {
    var policy = PolicyParser.builtInDefault();
    for (var fixture : Fixtures.nodes(Fixtures.path("gang/nodes.yaml"))) {
      var node = new NodeBuilder(fixture)
          .editMetadata().addToAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{...}").endMetadata()
          .editOrNewStatus().addToImages(new ContainerImageBuilder().addToNames("registry.example.com/cuda:12.4").withSizeBytes(1L << 30).build())
          .addToConditions(new NodeConditionBuilder().withType("Ready").withStatus("True").build()).endStatus()
          .build();

      var stripped = NodeFields.strip(node);

      assertThat(GpuCapacityMapper.map(stripped, policy.nodeLabels())).isEqualTo(GpuCapacityMapper.map(node, policy.nodeLabels()));
      assertThat(GpuNodeMapper.map(stripped, policy.nodeLabels())).isEqualTo(GpuNodeMapper.map(node, policy.nodeLabels()));
      var cordonTolerated = NodeConstraints.of(null);
      assertThat(cordonTolerated.admits(stripped)).isEqualTo(cordonTolerated.admits(node));
      assertThat(stripped.getStatus().getImages()).isEmpty();
      assertThat(stripped.getStatus().getConditions()).isEmpty();
      assertThat(stripped.getMetadata().getAnnotations()).doesNotContainKey("kubectl.kubernetes.io/last-applied-configuration");
    }
  }
}
