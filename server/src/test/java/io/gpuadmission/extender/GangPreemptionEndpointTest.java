package io.gpuadmission.extender;

import static io.gpuadmission.extender.SchedulerCalls.args;
import static io.gpuadmission.extender.SchedulerCalls.bind;
import static io.gpuadmission.extender.SchedulerCalls.json;
import static io.gpuadmission.extender.SchedulerCalls.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 29, item 4, through the extender's HTTPS API as kube-scheduler calls it, on the mock API
 * server: topology boards filled by a low-priority gang and single pods; a high-priority gang of two
 * 4-GPU members preempts as a unit (the low gang goes whole, the single pod stays), its members are
 * nominated, and once the victims are gone kube-scheduler's filter passes the planned node and its
 * bind puts each member on the GPUs its victim freed.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class GangPreemptionEndpointTest {
  private static final String NS = "gang-prio";
  private static final List<String> NODES = List.of("gp-dgx1-a", "gp-dgx1-b");
  private static final Map<String, String> POOL = Map.of("ack.node.gpu.schedule", "topology", "gang-preemption", "true");

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;

  @BeforeEach
  void aLowGangOnOneBoardAndAnImportantPodAndASinglePodOnTheOther() {
    client.resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).createOr(existing -> existing.update());
    var nodes = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/gang-preemption/nodes.yaml")), KubernetesList.class);
    for (HasMetadata node : nodes.getItems()) {
      client.resource(node).createOr(existing -> existing.update());
    }
    // gp-dgx1-a: the low gang, two 4-GPU members of priority 100. gp-dgx1-b: GPUs 0-5 for a pod of
    // priority 2000, GPU 6 for a single pod of priority 100, GPU 7 free.
    for (int i = 0; i < 2; i++) {
      running(member("low", i, 4, 100), "gp-dgx1-a", i == 0 ? "0,1,2,3" : "4,5,6,7", 100);
    }
    running(pod("important", 6), "gp-dgx1-b", "0,1,2,3,4,5", 2000);
    running(pod("single", 1), "gp-dgx1-b", "6", 100);
    await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claimsOn("gp-dgx1-a").size() == 2 && ledger.claimsOn("gp-dgx1-b").size() == 2);
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
  }

  @AfterEach
  void removeEverything() {
    for (var pod : client.pods().inNamespace(NS).list().getItems()) {
      letGo(pod.getMetadata().getName());
      client.pods().inNamespace(NS).withName(pod.getMetadata().getName()).delete();
    }
    client.v1().events().inNamespace(NS).delete();
    NODES.forEach(n -> client.nodes().withName(n).delete());
    await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(NS).list().getItems().isEmpty()
        && NODES.stream().allMatch(n -> ledger.claimsOn(n).isEmpty() && ledger.view(n).isEmpty()));
  }

  @Test
  void aHighPriorityGangPreemptsTheLowGangWholeAndBindsOnTheGpusItFreed() {
    var bert = List.of(client.resource(member("bert", 0, 4, 1000)).create(), client.resource(member("bert", 1, 4, 1000)).create());

    // kube-scheduler's filter while the gang has no room: no node, unresolvable (kube-scheduler's
    // own preemption cannot see a gang; the placement leader preempts for it).
    var waiting = json(post(base, "/extender/filter", args(pod("bert-worker-0"), NODES)));
    var noRoom = "gang \\\"gang-prio/bert\\\": needs 2 × 4 GPUs, the cluster has room for 0 (on the 2 nodes its members may run on)";
    assertThat(waiting).isEqualTo(json("{\"Nodes\":null,\"NodeNames\":[],\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{"
        + "\"gp-dgx1-a\":\"" + noRoom + "\",\"gp-dgx1-b\":\"" + noRoom + "\"},\"Error\":\"\"}"));

    // The leader preempts for the gang as a unit: the low gang whole, the single pod stays; each
    // member is nominated to gp-dgx1-a.
    await().atMost(Duration.ofSeconds(15)).until(() -> terminating("low-worker-0") && terminating("low-worker-1")
        && "gp-dgx1-a".equals(nominated("bert-worker-0")) && "gp-dgx1-a".equals(nominated("bert-worker-1")));
    var message = "gang \"gang-prio/bert\" preempted gang-prio/low-worker-0, gang-prio/low-worker-1 to free gp-dgx1-a GPUs 0,1,2,3,"
        + " gp-dgx1-a GPUs 4,5,6,7; each member is nominated to its node, and the gang is planned there once they are gone";
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(events("Preempting"))
        .containsExactly("bert-worker-0: " + message, "bert-worker-1: " + message));
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> !terminating("single") && !terminating("important"));

    // The kubelet lets the low gang go: the gang is planned where it was, and kube-scheduler's
    // filter, prioritize and bind place each member there.
    letGo("low-worker-0");
    letGo("low-worker-1");
    await().atMost(Duration.ofSeconds(15)).until(() -> bert.stream().allMatch(m -> MemberPlan.of(pod(m.getMetadata().getName())).isPresent()));
    for (var member : bert) {
      var name = member.getMetadata().getName();
      var passed = json(post(base, "/extender/filter", args(pod(name), NODES)));
      assertThat(passed.path("NodeNames").toString()).as(name).isEqualTo("[\"gp-dgx1-a\"]");
      assertThat(json(post(base, "/extender/bind", bind(member, "gp-dgx1-a")))).as(name).isEqualTo(json("{\"Error\":\"\"}"));
    }
    assertThat(pod("bert-worker-0").getMetadata().getAnnotations()).containsEntry(GpuAnnotations.GPU_INDICES, "0,1,2,3");
    assertThat(pod("bert-worker-1").getMetadata().getAnnotations()).containsEntry(GpuAnnotations.GPU_INDICES, "4,5,6,7");
    assertThat(pod("single").getMetadata().getDeletionTimestamp()).isNull();
  }

  /** A member of job {@code job}: the bert-worker fixture in this test's pool, {@code gpus} whole GPUs. */
  private static Pod member(String job, int index, int gpus, int priority) {
    var template = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("gang/bert-worker.yaml")), Pod.class);
    return new PodBuilder(template)
        .editMetadata().withName(job + "-worker-" + index).withNamespace(NS)
        .addToLabels("gpu-topology", job).addToLabels("gpu-topology-replica", "2").addToLabels("training.kubeflow.org/job-name", job).endMetadata()
        .editSpec().withNodeSelector(POOL).withPriority(priority)
        .editFirstContainer().editResources().addToLimits("aliyun.com/gpu", new Quantity(Integer.toString(gpus))).endResources().endContainer()
        .endSpec().build();
  }

  private static Pod pod(String name, int gpus) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace(NS).endMetadata()
        .withNewSpec().withNodeSelector(POOL).addNewContainer().withName("c").withImage("cuda")
        .withNewResources().addToLimits("aliyun.com/gpu", new Quantity(Integer.toString(gpus))).endResources().endContainer().endSpec().build();
  }

  /** Running on {@code node} with whole GPUs {@code gpus}, kept by a finalizer until let go (a kubelet stopping its containers). */
  private void running(Pod pod, String node, String gpus, int priority) {
    client.resource(new PodBuilder(pod).editMetadata().addToAnnotations(GpuAnnotations.GPU_INDICES, gpus).addToFinalizers("gpu-admission.io/test-kubelet").endMetadata()
        .editSpec().withNodeName(node).withPriority(priority).endSpec().withNewStatus().withPhase("Running").endStatus().build()).create();
  }

  private Pod pod(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  private void letGo(String name) {
    var pod = pod(name);
    if (pod != null && pod.getMetadata().getFinalizers() != null && !pod.getMetadata().getFinalizers().isEmpty()) {
      client.pods().inNamespace(NS).withName(name).edit(p -> {
        p.getMetadata().setFinalizers(new ArrayList<>());
        return p;
      });
    }
  }

  private String nominated(String name) {
    var pod = pod(name);
    return pod == null || pod.getStatus() == null ? null : pod.getStatus().getNominatedNodeName();
  }

  private boolean terminating(String name) {
    var pod = pod(name);
    return pod != null && pod.getMetadata().getDeletionTimestamp() != null;
  }

  private List<String> events(String reason) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
        .sorted()
        .toList();
  }
}
