package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A node must offer the GPU resource a pod asks, in the amount of its effective request. */
class NodeEligibilityTest {
  private final List<Node> nodes = Fixtures.nodes(Fixtures.path("gang/nodes.yaml"));

  private Optional<Node> node(String name) {
    return nodes.stream().filter(n -> n.getMetadata().getName().equals(name)).findFirst();
  }

  private static Pod asking(String resource, String initAmount, String amount) {
    return new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewSpec()
        .addNewInitContainer().withName("init").withNewResources().addToLimits(resource, new Quantity(initAmount)).endResources().endInitContainer()
        .addNewContainer().withName("main").withNewResources().addToLimits(resource, new Quantity(amount)).endResources().endContainer()
        .endSpec().build();
  }

  private Optional<String> refusal(Pod pod, String node) {
    return NodeEligibility.of(pod, PolicyParser.builtInDefault()).refusal(node, this::node).map(NodeRefusal::reason);
  }

  @Test
  void aNodeOfferingFewerWholeGpusThanTheEffectiveRequestIsRefused() {
    assertThat(refusal(asking("aliyun.com/gpu", "9", "1"), "dgx1-a")).contains("it has 8 allocatable aliyun.com/gpu, pod needs 9");
    assertThat(refusal(asking("aliyun.com/gpu", "8", "1"), "dgx1-a")).isEmpty();
  }

  @Test
  void aNodeWithoutTheResourceNamesWhatItOffers() {
    assertThat(refusal(asking("nvidia.com/gpu", "1", "1"), "dgx1-a"))
        .contains("it has no allocatable nvidia.com/gpu (its GPU resources: aliyun.com/gpu=8), pod needs 1");
  }

  @Test
  void aNodeNotKnownOrWithoutAllocatableIsNotJudged() {
    assertThat(refusal(asking("nvidia.com/gpu", "1", "1"), "no-such-node")).isEmpty();
    assertThat(NodeEligibility.ANY.refusal("dgx1-a", name -> { throw new AssertionError("ANY looks nothing up"); })).isEmpty();
  }

  @Test
  void readsWholeNumbersWithoutBigDecimalAndOtherFormatsWithIt() {
    assertThat(NodeEligibility.units(new Quantity("8"))).isEqualTo(8);
    assertThat(NodeEligibility.units(new Quantity("2k"))).isEqualTo(2000);
    assertThat(NodeEligibility.units(null)).isZero();
    // What apimachinery accepts and fabric8's own reading throws on: a Node sent in ExtenderArgs or a
    // --cluster file may hold them.
    assertThat(NodeEligibility.units(new Quantity(" 2 "))).isEqualTo(2);
    assertThat(NodeEligibility.units(new Quantity("Ki"))).isZero();
  }
}
