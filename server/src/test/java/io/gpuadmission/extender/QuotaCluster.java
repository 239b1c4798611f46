package io.gpuadmission.extender;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.QuotaTreeWatcher;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.support.Fixtures;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The cluster of quota/: two nodes of four whole GPUs, a cGPU node of two 16 GiB GPUs, namespaces
 * quota-a, quota-b and quota-c, and the ElasticQuotaTree of the three teams.
 */
final class QuotaCluster {
  static final List<String> NODES = List.of("whole-a", "whole-b", "share-q");
  static final List<String> NAMESPACES = List.of("quota-a", "quota-b", "quota-c");
  static final ResourceDefinitionContext TREES = new ResourceDefinitionContext.Builder()
      .withGroup(QuotaTreeWatcher.GROUP).withVersion(QuotaTreeWatcher.VERSION).withKind(QuotaTreeWatcher.KIND)
      .withPlural(QuotaTreeWatcher.PLURAL).withNamespaced(true).build();

  private QuotaCluster() {}

  static void create(KubernetesClient client, GpuLedger ledger) {
    for (var file : List.of("quota/namespaces.yaml", "quota/nodes.yaml")) {
      var list = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(file)), KubernetesList.class);
      for (HasMetadata item : list.getItems()) {
        client.resource(item).createOr(existing -> existing.update());
      }
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> NODES.stream().allMatch(n -> ledger.view(n).isPresent()));
  }

  /**
   * Deletes every pod of the namespaces, then the tree (pods first: without the tree a gang it held
   * back would be planned) and the nodes, and waits until the ledger has none of them.
   */
  static void remove(KubernetesClient client, GpuLedger ledger) {
    for (var namespace : NAMESPACES) {
      client.pods().inNamespace(namespace).delete();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> NAMESPACES.stream().allMatch(ns -> client.pods().inNamespace(ns).list().getItems().isEmpty()));
    client.genericKubernetesResources(TREES).inNamespace("kube-system").delete();
    NODES.forEach(n -> client.nodes().withName(n).delete());
    await().atMost(Duration.ofSeconds(10)).until(() -> NAMESPACES.stream().allMatch(ns -> client.pods().inNamespace(ns).list().getItems().isEmpty())
        && NODES.stream().allMatch(n -> ledger.claimsOn(n).isEmpty() && ledger.view(n).isEmpty()));
  }

  static GenericKubernetesResource tree(String file) {
    return KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(file)), GenericKubernetesResource.class);
  }

  static void apply(KubernetesClient client, GenericKubernetesResource tree) {
    client.genericKubernetesResources(TREES).inNamespace("kube-system").resource(tree).createOr(existing -> existing.update());
  }

  /** quota/pod-whole.yaml as {@code namespace/name} asking {@code gpus} whole GPUs, pending (not created). */
  static Pod whole(String namespace, String name, int gpus) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/pod-whole.yaml")), Pod.class);
    pod.getMetadata().setNamespace(namespace);
    pod.getMetadata().setName(name);
    pod.getSpec().getContainers().get(0).getResources().getLimits().put("nvidia.com/gpu", new Quantity(String.valueOf(gpus)));
    return pod;
  }

  /** {@code pod} bound to {@code node}, holding GPUs {@code indices}, of {@code priority}, running since {@code started}. */
  static Pod bound(Pod pod, String node, String indices, int priority, String started) {
    pod.getSpec().setNodeName(node);
    pod.getSpec().setPriority(priority);
    pod.getMetadata().setAnnotations(Map.of("gpu-admission.io/gpu-indices", indices));
    pod.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Running").withStartTime(started).build());
    return pod;
  }
}
