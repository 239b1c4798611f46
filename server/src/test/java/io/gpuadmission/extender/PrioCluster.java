package io.gpuadmission.extender;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.support.Fixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster of preemption/: three cGPU nodes of two 16 GiB GPUs in namespace {@code prio}, each
 * GPU holding a low-priority 12 GiB pod that a finalizer keeps until the test lets it go (a kubelet
 * stopping its containers).
 */
final class PrioCluster {
  static final String NS = "prio";
  static final List<String> NODES = List.of("share-a", "share-b", "share-c");

  private PrioCluster() {}

  /** Creates it and waits until the ledger holds every low pod and this replica leads. */
  static void create(KubernetesClient client, GpuLedger ledger, LeaderGate gate) {
    client.resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).createOr(existing -> existing.update());
    for (var file : List.of("preemption/nodes.yaml", "preemption/low-pods.yaml")) {
      var list = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(file)), KubernetesList.class);
      for (HasMetadata item : list.getItems()) {
        client.resource(item).createOr(existing -> existing.update());
      }
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> NODES.stream().allMatch(n -> ledger.claimsOn(n).size() == 2));
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
  }

  /** Deletes every pod of the namespace and the nodes, and waits until the ledger has none of them. */
  static void remove(KubernetesClient client, GpuLedger ledger) {
    for (var pod : client.pods().inNamespace(NS).list().getItems()) {
      letGo(client, pod.getMetadata().getName());
      client.pods().inNamespace(NS).withName(pod.getMetadata().getName()).delete();
    }
    NODES.forEach(n -> client.nodes().withName(n).delete());
    await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(NS).list().getItems().isEmpty()
        && NODES.stream().allMatch(n -> ledger.claimsOn(n).isEmpty() && ledger.view(n).isEmpty()));
  }

  /** The kubelet's part: the pod's containers stopped, its finalizer goes. */
  static void letGo(KubernetesClient client, String name) {
    var pod = client.pods().inNamespace(NS).withName(name).get();
    if (pod != null && pod.getMetadata().getFinalizers() != null && !pod.getMetadata().getFinalizers().isEmpty()) {
      client.pods().inNamespace(NS).withName(name).edit(p -> {
        p.getMetadata().setFinalizers(new ArrayList<>());
        return p;
      });
    }
  }

  /** A pending share pod like preemption/pod-high-8g.yaml, under another name, priority and size (not created). */
  static Pod pending(String name, int priority, int gib) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("preemption/pod-high-8g.yaml")), Pod.class);
    pod.getMetadata().setName(name);
    pod.getSpec().setPriority(priority);
    pod.getSpec().setPriorityClassName(null);
    pod.getSpec().getContainers().get(0).getResources().getLimits().put("aliyun.com/gpu-mem", new Quantity(String.valueOf(gib)));
    return pod;
  }
}
