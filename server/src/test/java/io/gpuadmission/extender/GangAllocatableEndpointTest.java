package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Gang planning against {@code status.allocatable}, through the extender's HTTPS API as
 * kube-scheduler calls it, on the mock API server: three 8-GPU topology nodes of their own pool,
 * one or two of which report only 4 {@code aliyun.com/gpu} (GPUs their device plugin counts
 * unhealthy). A gang of two 8-GPU members is planned on the nodes kube-scheduler's NodeResourcesFit
 * will take it on, or waits saying which nodes fall short and what they offer.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class GangAllocatableEndpointTest {
  private static final String NS = "gang-alloc";
  private static final List<String> NODES = List.of("ga-dgx1-a", "ga-dgx1-b", "ga-dgx1-c");
  private static final Map<String, String> POOL = Map.of("ack.node.gpu.schedule", "topology", "gang-allocatable", "true");

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;

  @BeforeEach
  void namespaceAndLeader() {
    client.resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).createOr(existing -> existing.update());
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
  }

  @AfterEach
  void removeEverything() {
    client.pods().inNamespace(NS).delete();
    client.v1().events().inNamespace(NS).delete();
    NODES.forEach(n -> client.nodes().withName(n).delete());
    await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(NS).list().getItems().isEmpty()
        && NODES.stream().allMatch(n -> ledger.claimsOn(n).isEmpty() && ledger.view(n).isEmpty()));
  }

  @Test
  void aGangIsPlannedOnTheNodesWhoseAllocatableTakesItAndBindsThere() {
    nodes(4, 8, 8);
    var members = List.of(client.resource(member(0)).create(), client.resource(member(1)).create());

    // By labels ga-dgx1-a would come first (equal nodes, first name); its allocatable takes no 8-GPU member.
    await().atMost(Duration.ofSeconds(15)).until(() -> members.stream().allMatch(m -> MemberPlan.of(pod(m.getMetadata().getName())).isPresent()));
    assertThat(members.stream().map(m -> MemberPlan.of(pod(m.getMetadata().getName())).orElseThrow().node()).sorted())
        .containsExactly("ga-dgx1-b", "ga-dgx1-c");
    for (var member : members) {
      var name = member.getMetadata().getName();
      var planned = MemberPlan.of(pod(name)).orElseThrow().node();
      var passed = json(post("/extender/filter", args(pod(name))));
      assertThat(passed.path("NodeNames").toString()).as(name).isEqualTo("[\"" + planned + "\"]");
      assertThat(json(post("/extender/bind", SchedulerCalls.bind(pod(name), planned)))).as(name).isEqualTo(json("{\"Error\":\"\"}"));
      assertThat(pod(name).getMetadata().getAnnotations()).as(name).containsEntry(GpuAnnotations.GPU_INDICES, "0,1,2,3,4,5,6,7");
    }
  }

  @Test
  void aGangThatFitsNoAllocatableWaitsNamingTheNodesAndWhatTheyOffer() {
    nodes(4, 4, 8);
    client.resource(member(0)).create();
    client.resource(member(1)).create();

    var reason = "gang \\\"gang-alloc/bert\\\": needs 2 × 8 GPUs, the cluster has room for 1 (on the 3 nodes its members may run on);"
        + " status.allocatable gives fewer GPUs than the node labels count on ga-dgx1-a (4 aliyun.com/gpu allocatable)"
        + " and ga-dgx1-b (4 aliyun.com/gpu allocatable)";
    assertThat(json(post("/extender/filter", args(pod("bert-worker-0"))))).isEqualTo(json("{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{},"
        + "\"FailedAndUnresolvableNodes\":{\"ga-dgx1-a\":\"" + reason + "\",\"ga-dgx1-b\":\"" + reason + "\",\"ga-dgx1-c\":\"" + reason
        + "\"},\"Error\":\"\"}"));
    var waiting = reason.replace("\\\"", "\"");
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(events("GangWaiting"))
        .containsExactly("bert-worker-0: " + waiting, "bert-worker-1: " + waiting));
    assertThat(MemberPlan.of(pod("bert-worker-0"))).isEmpty();
  }

  /** The three nodes, each labelled with 8 V100s, reporting these counts of aliyun.com/gpu; awaited in the ledger. */
  private void nodes(int... allocatable) {
    for (int i = 0; i < NODES.size(); i++) {
      client.resource(new NodeBuilder().withNewMetadata().withName(NODES.get(i))
          .addToLabels("aliyun.accelerator/nvidia_count", "8").addToLabels("aliyun.accelerator/nvidia_mem", "16160MiB")
          .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB").addToLabels(POOL).endMetadata()
          .withNewStatus().addToAllocatable("aliyun.com/gpu", new Quantity(Integer.toString(allocatable[i])))
          .addToAllocatable("cpu", new Quantity("96")).endStatus().build()).createOr(existing -> existing.update());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> NODES.stream().allMatch(n -> ledger.view(n).isPresent()));
  }

  /** A member of the 2-member job bert asking 8 whole GPUs, in this test's pool. */
  private static Pod member(int index) {
    var template = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("gang/bert-worker.yaml")), Pod.class);
    return new PodBuilder(template)
        .editMetadata().withName("bert-worker-" + index).withNamespace(NS).addToLabels("gpu-topology-replica", "2").endMetadata()
        .editSpec().withNodeSelector(POOL)
        .editFirstContainer().editResources().addToLimits("aliyun.com/gpu", new Quantity("8")).endResources().endContainer()
        .endSpec().build();
  }

  private Pod pod(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  private List<String> events(String reason) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
        .sorted()
        .toList();
  }

  private static String args(Pod pod) {
    return SchedulerCalls.args(pod, NODES);
  }

  private String post(String path, String body) {
    return SchedulerCalls.post(base, path, body);
  }

  private static JsonNode json(String text) {
    return SchedulerCalls.json(text);
  }
}
