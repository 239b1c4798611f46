package io.gpuadmission.extender;

import static io.gpuadmission.extender.SchedulerCalls.args;
import static io.gpuadmission.extender.SchedulerCalls.json;
import static io.gpuadmission.extender.SchedulerCalls.post;
import io.gpuadmission.support.SchedulerCaller;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 22, item 5, through the extender's HTTPS API as kube-scheduler calls it, on the mock API
 * server: six low-priority 12 GiB pods, one on each 16 GiB GPU of three nodes, and a
 * {@code priorityClassName: high} pod asking 8 GiB. kube-scheduler sees 8 GiB free on every node,
 * so its own preemption finds no victims and never calls the preempt verb; the placement leader
 * preempts on the GPUs. Where kube-scheduler does call the verb, its victims are made right.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class PreemptionEndpointTest {
  private static final String NS = PrioCluster.NS;

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;
  @Inject PodFactsIndex facts;

  @BeforeEach
  void sixLowPodsFillEveryGpu() {
    PrioCluster.create(client, ledger, gate);
  }

  @AfterEach
  void removeEverything() {
    PrioCluster.remove(client, ledger);
  }

  @Test
  void theLeaderPreemptsTheYoungestLowPodOnTheGpusAndTheHighPodBindsThere() {
    var high = create("preemption/pod-high-8g.yaml");

    // kube-scheduler's filter: every node refused, and eviction could help on each.
    var refused = json(post(base, "/extender/filter", args(high, PrioCluster.NODES)));
    assertThat(refused.path("NodeNames").toString()).isEqualTo("[]");
    assertThat(refused.path("FailedNodes"))
        .isEqualTo(json("{\"share-a\":\"largest free GPU has 4GiB of aliyun.com/gpu-mem, pod needs 8GiB\","
            + "\"share-b\":\"largest free GPU has 4GiB of aliyun.com/gpu-mem, pod needs 8GiB\","
            + "\"share-c\":\"largest free GPU has 4GiB of aliyun.com/gpu-mem, pod needs 8GiB\"}"));

    // kube-scheduler's own preemption finds no victims and calls no preempt verb: the leader acts.
    await().atMost(Duration.ofSeconds(10)).until(() -> pod("low-5").getMetadata().getDeletionTimestamp() != null
        && pod("high-8g").getStatus().getNominatedNodeName() != null);
    var victim = pod("low-5");
    assertThat(disruptionTarget(victim))
        .extracting(PodCondition::getStatus, PodCondition::getReason, PodCondition::getMessage)
        .containsExactly("True", "PreemptionByScheduler", "gpu-scheduler: preempting to accommodate a higher priority pod");
    assertThat(pod("high-8g").getStatus().getNominatedNodeName()).isEqualTo("share-c");
    for (var other : List.of("low-0", "low-1", "low-2", "low-3", "low-4")) {
      assertThat(pod(other).getMetadata().getDeletionTimestamp()).as(other).isNull();
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> events("low-5").contains("Preempted: Preempted by pod " + high.getMetadata().getUid() + " (prio/high-8g) on node share-c")
        && events("high-8g").contains("Preempting: preempted prio/low-5 on node share-c to free GPU 1 for this pod (8GiB of one GPU); nominated to share-c"
            + " (kube-scheduler counts GPU memory per node and found no victims there)"));

    // While low-5 terminates the next cycle is refused again, and nothing more is preempted.
    assertThat(json(post(base, "/extender/filter", args(pod("high-8g"), PrioCluster.NODES))).path("NodeNames").toString()).isEqualTo("[]");
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3))
        .until(() -> client.pods().inNamespace(NS).list().getItems().stream().filter(p -> p.getMetadata().getDeletionTimestamp() != null).count() == 1);

    // The kubelet lets low-5 go: its GPU is free, the pod fits there only, and binds to GPU 1.
    letGo("low-5");
    await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(NS).withName("low-5").get() == null && ledger.claimsOn("share-c").size() == 1);
    // Until the pod binds, the freed GPU is held for it (kube-scheduler counts it on share-c for
    // pods of no higher priority): a less important 12 GiB pod finds 8 GiB there.
    await().atMost(Duration.ofSeconds(5)).until(() -> "share-c".equals(facts.facts(high.getMetadata().getUid()).orElseThrow().nominated()));
    var mid = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("preemption/pod-high-8g.yaml")), Pod.class);
    mid.getMetadata().setName("mid-12g");
    mid.getSpec().setPriority(500);
    mid.getSpec().setPreemptionPolicy("Never");
    mid.getSpec().getContainers().get(0).getResources().getLimits().put("aliyun.com/gpu-mem", new io.fabric8.kubernetes.api.model.Quantity("12"));
    assertThat(json(post(base, "/extender/filter", args(client.resource(mid).create(), PrioCluster.NODES))).path("FailedNodes").path("share-c").asText())
        .isEqualTo("largest free GPU has 8GiB of aliyun.com/gpu-mem, pod needs 12GiB");
    var placed = json(post(base, "/extender/filter", args(pod("high-8g"), PrioCluster.NODES)));
    assertThat(placed.path("NodeNames").toString()).isEqualTo("[\"share-c\"]");
    var bind = Map.of("PodName", "high-8g", "PodNamespace", NS, "PodUID", high.getMetadata().getUid(), "Node", "share-c");
    assertThat(json(post(base, "/extender/bind", KubernetesJson.mapper().valueToTree(bind).toString()))).isEqualTo(json("{\"Error\":\"\"}"));
    assertThat(pod("high-8g").getMetadata().getAnnotations()).containsEntry("ALIYUN_COM_GPU_MEM_IDX", "1").containsEntry("ALIYUN_COM_GPU_MEM_POD", "8");
  }

  @Test
  void twoHighPodsRefusedTogetherEvictOneVictimAndShareTheGpuItFrees() {
    // Issue 29, item 2: two pods of priority 1000 asking 8 GiB, refused in the same moment.
    // (Names of their own: the mock API server keeps each Binding it was given.)
    var first = pending("pair-a", 1000, "8");
    var second = pending("pair-b", 1000, "8");
    assertThat(json(post(base, "/extender/filter", args(first, PrioCluster.NODES))).path("NodeNames").toString()).isEqualTo("[]");
    assertThat(json(post(base, "/extender/filter", args(second, PrioCluster.NODES))).path("NodeNames").toString()).isEqualTo("[]");

    // The first evicts low-5 (share-c GPU 1); 16 GiB less its 8 leaves room for the second there,
    // so the second is nominated to the same GPU and evicts nobody.
    await().atMost(Duration.ofSeconds(10)).until(() -> "share-c".equals(pod("pair-a").getStatus().getNominatedNodeName())
        && "share-c".equals(pod("pair-b").getStatus().getNominatedNodeName()));
    await().atMost(Duration.ofSeconds(5)).until(() -> events("pair-a").contains(
            "Preempting: preempted prio/low-5 on node share-c to free GPU 1 for this pod (8GiB of one GPU); nominated to share-c"
                + " (kube-scheduler counts GPU memory per node and found no victims there)")
        && events("pair-b").contains(
            "Preempting: preempted nobody: prio/low-5 is terminating already on node share-c, which frees GPU 1 for this pod (8GiB of one GPU)"
                + " beside the pods nominated there; nominated to share-c (kube-scheduler counts GPU memory per node and found no victims there)"));
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> client.pods().inNamespace(NS).list().getItems().stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() != null).map(p -> p.getMetadata().getName()).toList().equals(List.of("low-5")));

    // low-5 goes: both pass share-c only and bind to GPU 1, which holds them both.
    letGo("low-5");
    await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(NS).withName("low-5").get() == null && ledger.claimsOn("share-c").size() == 1);
    for (var high : List.of(first, second)) {
      var name = high.getMetadata().getName();
      assertThat(json(post(base, "/extender/filter", args(pod(name), PrioCluster.NODES))).path("NodeNames").toString()).as(name).isEqualTo("[\"share-c\"]");
      var bind = Map.of("PodName", name, "PodNamespace", NS, "PodUID", high.getMetadata().getUid(), "Node", "share-c");
      assertThat(json(post(base, "/extender/bind", KubernetesJson.mapper().valueToTree(bind).toString()))).as(name).isEqualTo(json("{\"Error\":\"\"}"));
      assertThat(pod(name).getMetadata().getAnnotations()).as(name).containsEntry("ALIYUN_COM_GPU_MEM_IDX", "1");
    }
    assertThat(pod("low-4").getMetadata().getDeletionTimestamp()).isNull();
  }

  @Test
  void aPreemptionClearsTheNominationsOfLessImportantPodsToTheFreedNodeOnly() {
    // Nominated by earlier preemptions: a priority-500 pod to share-c, another to share-a.
    var onC = nominated(pending("mid-on-c", 500, "8"), "share-c");
    var onA = nominated(pending("mid-on-a", 500, "8"), "share-a");
    await().atMost(Duration.ofSeconds(5)).until(() -> facts.nominatedBelow("share-c", 1000).size() == 1 && facts.nominatedBelow("share-a", 1000).size() == 1);

    var high = create("preemption/pod-high-8g.yaml");
    assertThat(json(post(base, "/extender/filter", args(high, PrioCluster.NODES))).path("NodeNames").toString()).isEqualTo("[]");
    await().atMost(Duration.ofSeconds(10)).until(() -> "share-c".equals(pod("high-8g").getStatus().getNominatedNodeName()));

    // As kube-scheduler's prepareCandidate: the less important pod nominated to share-c may no
    // longer fit there and is free to go elsewhere; the one nominated to share-a keeps its place.
    await().atMost(Duration.ofSeconds(5)).until(() -> pod("mid-on-c").getStatus().getNominatedNodeName() == null);
    assertThat(pod("mid-on-c").getMetadata().getUid()).isEqualTo(onC.getMetadata().getUid());
    assertThat(pod("mid-on-a").getStatus().getNominatedNodeName()).isEqualTo("share-a");
    assertThat(pod("mid-on-a").getMetadata().getUid()).isEqualTo(onA.getMetadata().getUid());
  }

  @Test
  void aNominatedPodThatNoPreemptionCanHelpLosesItsNomination() {
    // Priority 100, as every pod holding the GPUs: none of them may be evicted for it. Its
    // nomination (an earlier preemption whose GPU went to a pod of higher priority) would hold
    // share-c's GPUs against less important pods for as long as it waits.
    nominated(pending("peer-8g", 100, "8"), "share-c");
    await().atMost(Duration.ofSeconds(5)).until(() -> facts.nominatedBelow("share-c", 101).size() == 1);
    var refused = json(post(base, "/extender/filter", args(pod("peer-8g"), PrioCluster.NODES)));
    assertThat(refused.path("NodeNames").toString()).isEqualTo("[]");
    assertThat(refused.path("FailedNodes").path("share-c").asText()).isEqualTo("largest free GPU has 4GiB of aliyun.com/gpu-mem, pod needs 8GiB");

    // kube-scheduler would have cleared it ("Preemption is not helpful for scheduling") had its own
    // preemption seen the GPUs; the leader, finding no victims, does.
    await().atMost(Duration.ofSeconds(10)).until(() -> pod("peer-8g").getStatus().getNominatedNodeName() == null);
    assertThat(client.pods().inNamespace(NS).list().getItems()).noneMatch(p -> p.getMetadata().getDeletionTimestamp() != null);
  }

  @Test
  void thePreemptVerbAddsTheVictimsThatFreeAGpuToKubeSchedulersAndDropsNodesWithout() {
    var small = create("preemption/pod-small-share-a.yaml");
    await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claimsOn("share-a").size() == 3 && facts.facts(small.getMetadata().getUid()).isPresent());
    var high = create("preemption/pod-high-8g.yaml");
    // A filter call first (share-b and share-c, which kube-scheduler's own filters passed): the
    // leader waits for kube-scheduler's preemption of this cycle.
    assertThat(json(post(base, "/extender/filter", args(high, List.of("share-b", "share-c")))).path("NodeNames").toString()).isEqualTo("[]");

    // kube-scheduler's dry run found victims by node totals on share-a (the 4 GiB pod) and on the
    // GPU-less cn-beijing.i-cpu-a (a pod it would evict for CPU): ProcessPreemption, nodeCacheCapable.
    var body = "{\"Pod\":" + KubernetesJson.mapper().valueToTree(high) + ",\"NodeNameToMetaVictims\":{"
        + "\"share-a\":{\"Pods\":[{\"UID\":\"" + small.getMetadata().getUid() + "\"}],\"NumPDBViolations\":0},"
        + "\"cn-beijing.i-cpu-a\":{\"Pods\":[{\"UID\":\"cpu-pod-uid\"}],\"NumPDBViolations\":0}}}";
    var answer = json(post(base, "/extender/preempt", body));

    // share-a keeps kube-scheduler's victim and adds the one pod that frees a GPU (low-1, the younger
    // of the two 12 GiB pods); the node without GPUs is dropped.
    assertThat(answer).isEqualTo(json("{\"NodeNameToMetaVictims\":{\"share-a\":{\"Pods\":[{\"UID\":\"" + small.getMetadata().getUid()
        + "\"},{\"UID\":\"" + pod("low-1").getMetadata().getUid() + "\"}],\"NumPDBViolations\":0}}}"));

    // The same with whole pods (nodeCacheCapable: false) and the lower-case keys of old schedulers.
    var whole = "{\"pod\":" + KubernetesJson.mapper().valueToTree(high) + ",\"nodeToVictims\":{\"share-a\":{\"pods\":["
        + KubernetesJson.mapper().valueToTree(pod("small")) + "],\"numPDBViolations\":0}}}";
    assertThat(json(post(base, "/extender/preempt", whole))).isEqualTo(answer);

    // kube-scheduler preempts on share-a: the leader, told by the verb, preempts nothing itself.
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3))
        .until(() -> client.pods().inNamespace(NS).list().getItems().stream().noneMatch(p -> p.getMetadata().getDeletionTimestamp() != null));
  }

  @Test
  void aPodThatNeverPreemptsEvictsNobody() {
    var never = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("preemption/pod-high-8g.yaml")), Pod.class);
    never.getSpec().setPreemptionPolicy("Never");
    var high = client.resource(never).create();

    assertThat(json(post(base, "/extender/filter", args(high, PrioCluster.NODES))).path("NodeNames").toString()).isEqualTo("[]");
    var body = "{\"Pod\":" + KubernetesJson.mapper().valueToTree(high) + ",\"NodeNameToMetaVictims\":{"
        + "\"share-a\":{\"Pods\":[{\"UID\":\"" + pod("low-0").getMetadata().getUid() + "\"}],\"NumPDBViolations\":0}}}";
    assertThat(json(post(base, "/extender/preempt", body))).isEqualTo(json("{\"NodeNameToMetaVictims\":{}}"));
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3))
        .until(() -> client.pods().inNamespace(NS).list().getItems().stream().noneMatch(p -> p.getMetadata().getDeletionTimestamp() != null));
  }

  @Test
  void malformedPreemptionArgsGet400WithAReason() {
    var answer = SchedulerCaller.given().baseUri(base.toString()).contentType(ContentType.JSON)
        .body("{\"NodeNameToMetaVictims\":{}}").post("/extender/preempt").then().statusCode(400).extract().asString();
    assertThat(json(answer)).isEqualTo(json(
        "{\"Error\":\"ExtenderPreemptionArgs without a Pod (expected {\\\"Pod\\\": {...}, \\\"NodeNameToMetaVictims\\\": {...}})\"}"));
    var noUid = "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNameToMetaVictims\":{\"share-a\":{\"Pods\":[{}]}}}";
    answer = SchedulerCaller.given().baseUri(base.toString()).contentType(ContentType.JSON)
        .body(noUid).post("/extender/preempt").then().statusCode(400).extract().asString();
    assertThat(json(answer)).isEqualTo(json("{\"Error\":\"victim 0 on node \\\"share-a\\\" has no UID\"}"));
  }

  private Pod create(String file) {
    return client.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(file)), Pod.class)).create();
  }

  /** A pending share pod like the high one, under another name, priority and size. */
  private Pod pending(String name, int priority, String gib) {
    return client.resource(PrioCluster.pending(name, priority, Integer.parseInt(gib))).create();
  }

  /** {@code status.nominatedNodeName}, as kube-scheduler writes it after a preemption. */
  private Pod nominated(Pod pod, String node) {
    return client.pods().inNamespace(NS).withName(pod.getMetadata().getName()).editStatus(p -> {
      p.getStatus().setNominatedNodeName(node);
      return p;
    });
  }

  private Pod pod(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  private void letGo(String name) {
    PrioCluster.letGo(client, name);
  }

  private static PodCondition disruptionTarget(Pod pod) {
    return pod.getStatus().getConditions().stream().filter(c -> "DisruptionTarget".equals(c.getType())).findFirst().orElseThrow();
  }

  private List<String> events(String name) {
    return client.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> name.equals(e.getInvolvedObject().getName()))
        .map(e -> e.getReason() + ": " + e.getMessage())
        .toList();
  }
}
