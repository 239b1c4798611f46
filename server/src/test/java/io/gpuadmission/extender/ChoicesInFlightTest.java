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
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 29, item 5, through the extender's HTTPS API as kube-scheduler calls it, on the mock API
 * server: kube-scheduler binds asynchronously, so pod B's filter may come between pod A's
 * prioritize and A's bind. The node prioritize ranked first for A is held for A until its bind (a
 * choice in flight), and a choice whose bind never comes stops counting once the pod is scheduled
 * again, deleted, or the hold's bound has passed.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class ChoicesInFlightTest {
  private static final String NS = "in-flight";
  private static final List<String> NODES = List.of("in-flight-a", "in-flight-b");
  private static final String A_FULL = "largest free GPU has 0GiB of aliyun.com/gpu-mem, pod needs 10GiB";
  private static final String B_HELD = "largest free GPU has 6GiB of aliyun.com/gpu-mem, pod needs 10GiB";

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;
  @Inject PodFactsIndex facts;

  @ConfigProperty(name = "gpu-admission.placement.choice-timeout")
  Duration choiceTimeout;

  @BeforeEach
  void tenGibFreeOnOneNodeSixteenOnTheOther() {
    client.resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).createOr(existing -> existing.update());
    var cluster = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/in-flight/cluster.yaml")), KubernetesList.class);
    for (HasMetadata item : cluster.getItems()) {
      client.resource(item).createOr(existing -> existing.update());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claimsOn("in-flight-a").size() == 1 && ledger.view("in-flight-b").isPresent());
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
  }

  @AfterEach
  void removeEverything() {
    client.pods().inNamespace(NS).delete();
    NODES.forEach(n -> client.nodes().withName(n).delete());
    await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inNamespace(NS).list().getItems().isEmpty()
        && NODES.stream().allMatch(n -> ledger.claimsOn(n).isEmpty() && ledger.view(n).isEmpty()));
  }

  @Test
  void aPodsChosenNodeCountsForTheNextPodUntilItsBind() {
    var a = pending("pod-a");
    assertThat(json(post(base, "/extender/filter", args(a, NODES))).path("NodeNames").toString()).isEqualTo("[\"in-flight-a\",\"in-flight-b\"]");
    assertThat(json(post(base, "/extender/prioritize", args(a, NODES))))
        .isEqualTo(json("[{\"Host\":\"in-flight-a\",\"Score\":10},{\"Host\":\"in-flight-b\",\"Score\":0}]"));

    // kube-scheduler's next scheduling cycle, before A's binding cycle reaches our bind.
    var b = pending("pod-b");
    var filtered = json(post(base, "/extender/filter", args(b, NODES)));
    assertThat(filtered.path("NodeNames").toString()).isEqualTo("[\"in-flight-b\"]");
    assertThat(filtered.path("FailedNodes")).isEqualTo(json("{\"in-flight-a\":\"" + A_FULL + "\"}"));

    // A's bind takes the GPU its choice held; the choice becomes the real claim.
    assertThat(json(post(base, "/extender/bind", bind(a, "in-flight-a")))).isEqualTo(json("{\"Error\":\"\"}"));
    assertThat(pod("pod-a").getMetadata().getAnnotations()).containsEntry("ALIYUN_COM_GPU_MEM_IDX", "0").containsEntry("ALIYUN_COM_GPU_MEM_POD", "10");
    assertThat(ledger.claim(a.getMetadata().getUid()).orElseThrow().phase()).isIn(GpuClaim.Phase.ASSUMED, GpuClaim.Phase.BOUND);
    // B passed one node only, so kube-scheduler takes it without prioritize: it is B's choice.
    assertThat(ledger.claim(b.getMetadata().getUid()).orElseThrow())
        .extracting(GpuClaim::node, GpuClaim::phase, GpuClaim::gpus)
        .containsExactly("in-flight-b", GpuClaim.Phase.CHOSEN, List.of(0));
    assertThat(ledger.choicesHeld()).isEqualTo(1);
  }

  @Test
  void aChoiceWhoseBindNeverComesStopsCountingWhenThePodIsScheduledAgainDeletedOrAfterItsBound() {
    var b = pending("pod-b");
    assertThat(json(post(base, "/extender/filter", args(b, List.of("in-flight-b")))).path("NodeNames").toString()).isEqualTo("[\"in-flight-b\"]");
    var c = pending("pod-c");
    assertThat(json(post(base, "/extender/filter", args(c, List.of("in-flight-b")))).path("FailedNodes"))
        .isEqualTo(json("{\"in-flight-b\":\"" + B_HELD + "\"}"));

    // B's bind failed in kube-scheduler (a pre-bind plugin, say): its next cycle is not refused by
    // what its last one chose, and the choice moves rather than doubling.
    assertThat(json(post(base, "/extender/filter", args(b, List.of("in-flight-b")))).path("NodeNames").toString()).isEqualTo("[\"in-flight-b\"]");
    assertThat(ledger.choicesHeld()).isEqualTo(1);

    // B is deleted: the informer's word frees its choice.
    client.pods().inNamespace(NS).withName("pod-b").delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claim(b.getMetadata().getUid()).isEmpty());
    assertThat(json(post(base, "/extender/filter", args(c, List.of("in-flight-b")))).path("NodeNames").toString()).isEqualTo("[\"in-flight-b\"]");

    // C now holds in-flight-b; kube-scheduler never binds it: its choice counts until its bound only.
    var chosenAt = System.nanoTime();
    var d = pending("pod-d");
    assertThat(json(post(base, "/extender/filter", args(d, List.of("in-flight-b")))).path("FailedNodes"))
        .isEqualTo(json("{\"in-flight-b\":\"" + B_HELD + "\"}"));
    await().atMost(choiceTimeout.plusSeconds(5)).pollInterval(Duration.ofMillis(200))
        .until(() -> ledger.claim(c.getMetadata().getUid()).isEmpty());
    assertThat(Duration.ofNanos(System.nanoTime() - chosenAt)).isGreaterThanOrEqualTo(choiceTimeout.minusSeconds(1));
    assertThat(json(post(base, "/extender/filter", args(d, List.of("in-flight-b")))).path("NodeNames").toString()).isEqualTo("[\"in-flight-b\"]");
  }

  @Test
  void aBindToAnotherNodeDropsTheChoiceAndTakesThatNode() {
    // A name of its own: the mock API server keeps each Binding it was given.
    var a = pending("moved-a");
    json(post(base, "/extender/filter", args(a, NODES)));
    json(post(base, "/extender/prioritize", args(a, NODES)));
    assertThat(ledger.claim(a.getMetadata().getUid()).orElseThrow().node()).isEqualTo("in-flight-a");

    // Other scorers outweighed ours: kube-scheduler binds A to in-flight-b.
    assertThat(json(post(base, "/extender/bind", bind(a, "in-flight-b")))).isEqualTo(json("{\"Error\":\"\"}"));
    assertThat(ledger.claimsOn("in-flight-a")).hasSize(1);
    assertThat(ledger.claim(a.getMetadata().getUid()).orElseThrow().node()).isEqualTo("in-flight-b");
    assertThat(ledger.choicesHeld()).isZero();
  }

  /** A pending pod, once the pod informer shows it (a choice is held only for a pod it shows). */
  private Pod pending(String name) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/in-flight/pod-10g.yaml")), Pod.class);
    pod.getMetadata().setName(name);
    var created = client.resource(pod).create();
    await().atMost(Duration.ofSeconds(10)).until(() -> facts.facts(created.getMetadata().getUid()).isPresent());
    return created;
  }

  private Pod pod(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }
}
