package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.GpuCapacityMapper;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.util.List;

/** The placement fixtures under src/test/resources/placement/, read as the watchers read them. */
final class PlacementFixtures {
  private PlacementFixtures() {}

  static GpuPolicy dgx1Policy() {
    try {
      return PolicyParser.parse(Fixtures.text(Fixtures.path("placement/policy-dgx1.yaml")));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static List<Node> nodes() {
    return Fixtures.nodes(Fixtures.path("placement/nodes.yaml"));
  }

  /** A fixture node by name, as the node informer would give it. */
  static java.util.Optional<Node> node(String name) {
    return nodes().stream().filter(n -> n.getMetadata().getName().equals(name)).findFirst();
  }

  static Pod pod(String file) {
    return KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("placement/" + file)), Pod.class);
  }

  /** A one-container pod asking {@code gib} GiB of GPU memory (a gpushare pod), not yet bound. */
  static Pod sharePod(String name, String namespace, int gib) {
    return new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("cuda")
        .withNewResources().addToLimits("aliyun.com/gpu-mem", new io.fabric8.kubernetes.api.model.Quantity(Integer.toString(gib)))
        .endResources().endContainer().endSpec().build();
  }

  static ConfigMap unhealthyShareB() {
    return KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("placement/unhealthy-gpu-gpu-share-b.yaml")), ConfigMap.class);
  }

  /** A ledger with every fixture node and share-b's unhealthy GPUs. */
  static GpuLedger ledger(GpuPolicy policy) {
    var ledger = new GpuLedger();
    for (var node : nodes()) {
      GpuCapacityMapper.map(node, policy.nodeLabels())
          .ifPresentOrElse(ledger::putNode, () -> ledger.putNodeWithoutGpus(node.getMetadata().getName()));
    }
    var map = unhealthyShareB();
    ledger.setUnhealthy(GpuCapacityMapper.unhealthyNode(map).orElseThrow(), GpuCapacityMapper.unhealthyGpus(map));
    return ledger;
  }
}
