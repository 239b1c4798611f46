package io.gpuadmission.extender;

import io.gpuadmission.support.SchedulerCaller;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The extender's wire contract over HTTPS, with kube-scheduler's payloads in both key casings and both cache modes. */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class ExtenderEndpointTest {
  private static final String CGPU_B = "cn-beijing.i-cgpu-v100-b";

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;
  @KubernetesTestServer KubernetesServer apiServer;

  @BeforeEach
  void fourPodsFillCgpuB() {
    var list = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/bound-pods.yaml")), KubernetesList.class);
    for (HasMetadata item : list.getItems()) {
      client.resource(item).createOr(existing -> existing.update());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claimsOn(CGPU_B).size() == 4 && ledger.view("cn-beijing.i-cgpu-v100-a").isPresent());
  }

  /** The bind tests' pod and Binding go again, so every test starts from the same ledger. */
  @AfterEach
  void removeBoundTestPod() {
    client.pods().inNamespace("default").withName("cgpu-test").delete();
    client.bindings().inNamespace("default").withName("cgpu-test").delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claimsOn("cn-beijing.i-cgpu-v100-a").isEmpty());
  }

  private io.restassured.response.ValidatableResponse post(String path, String body) {
    return SchedulerCaller.given().baseUri(base.toString()).contentType(ContentType.JSON).body(body).post(path).then();
  }

  private static JsonNode json(String text) {
    try {
      return KubernetesJson.mapper().readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String fixture(String name) {
    return Fixtures.text(Fixtures.path("extender/" + name));
  }

  @Test
  void filterWithGoFieldNamesAndNodeNamesAnswersWithReasons() {
    for (var prefix : new String[] {"/extender", "/gpushare-scheduler"}) {
      var answer = post(prefix + "/filter", fixture("filter-args-node-names.json")).statusCode(200).extract().asString();

      assertThat(json(answer)).isEqualTo(json(fixture("filter-node-names.expected.json")));
    }
  }

  @Test
  void filterWithLowerCaseKeysAndFullNodesAnswersWithNodeObjects() {
    var answer = json(post("/extender/filter", fixture("filter-args-nodes-lowercase.json")).statusCode(200).extract().asString());

    assertThat(answer.path("NodeNames").isNull()).isTrue();
    assertThat(answer.path("Nodes").path("items").findValuesAsText("name"))
        .containsExactly("cn-beijing.i-cgpu-v100-a");
    assertThat(answer.path("FailedNodes")).isEqualTo(json(fixture("filter-node-names.expected.json")).path("FailedNodes"));
    assertThat(answer.path("FailedAndUnresolvableNodes")).isEqualTo(json(fixture("filter-node-names.expected.json")).path("FailedAndUnresolvableNodes"));
    assertThat(answer.path("Error").asText()).isEmpty();
  }

  /**
   * What kube-scheduler sends with nodeCacheCapable: false for a pool of 405 feasible nodes, each
   * with kubelet's 50 images in its status: over 4 MB, more than kube-apiserver's 3 MiB, read and
   * answered like the small request (the 400 CPU nodes, not shown by the informer, are judged from
   * the objects sent).
   */
  @Test
  void filterOfFourHundredWholeNodesOverFourMegabytesIsAnswered() {
    var args = (com.fasterxml.jackson.databind.node.ObjectNode) json(fixture("filter-args-nodes-lowercase.json"));
    var items = (com.fasterxml.jackson.databind.node.ArrayNode) args.path("nodes").path("items");
    var cpuNode = items.get(4);
    for (int i = 0; i < 400; i++) {
      var copy = cpuNode.deepCopy();
      ((com.fasterxml.jackson.databind.node.ObjectNode) copy.path("metadata")).put("name", "cn-beijing.i-cpu-" + (1000 + i));
      items.add(copy);
    }
    for (var node : items) {
      var images = ((com.fasterxml.jackson.databind.node.ObjectNode) node.path("status")).putArray("images");
      for (int i = 0; i < 50; i++) {
        var image = images.addObject();
        image.putArray("names")
            .add("registry.cn-beijing.aliyuncs.com/acs/image-" + i + "@sha256:" + "%064x".formatted(i))
            .add("registry.cn-beijing.aliyuncs.com/acs/image-" + i + ":v1.2." + i);
        image.put("sizeBytes", 123_456_789L + i);
      }
    }
    var body = args.toString();
    assertThat(body.length()).isGreaterThan(4_000_000);

    var answer = json(post("/extender/filter", body).statusCode(200).extract().asString());

    var expected = json(fixture("filter-node-names.expected.json"));
    var unresolvable = (com.fasterxml.jackson.databind.node.ObjectNode) expected.path("FailedAndUnresolvableNodes").deepCopy();
    for (int i = 0; i < 400; i++) {
      unresolvable.put("cn-beijing.i-cpu-" + (1000 + i), "no GPUs known on this node (no GPU labels or allocatable GPU resources)");
    }
    assertThat(answer.path("Nodes").path("items").findValuesAsText("name")).containsExactly("cn-beijing.i-cgpu-v100-a");
    assertThat(answer.path("FailedNodes")).isEqualTo(expected.path("FailedNodes"));
    assertThat(answer.path("FailedAndUnresolvableNodes")).isEqualTo(unresolvable);
    assertThat(answer.path("Error").asText()).isEmpty();
  }

  @Test
  void prioritizeScoresEveryNodeZeroToTen() {
    var answer = post("/gpushare-scheduler/prioritize", fixture("filter-args-node-names.json")).statusCode(200).extract().asString();

    assertThat(json(answer)).isEqualTo(json(fixture("prioritize.expected.json")));
  }

  @Test
  void bindWithLowerCaseKeysWritesTheAnnotationsAndBinds() {
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
    var pod = client.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/pod-cgpu-test.yaml")), Pod.class))
        .createOr(existing -> existing.update());
    var before = Instant.now();
    var args = Map.of("podName", "cgpu-test", "podNamespace", "default", "podUID", pod.getMetadata().getUid(), "node", "cn-beijing.i-cgpu-v100-a");

    var answer = post("/extender/bind", KubernetesJson.mapper().valueToTree(args).toString()).statusCode(200).extract().asString();

    assertThat(json(answer)).isEqualTo(json("{\"Error\":\"\"}"));
    var annotations = client.pods().inNamespace("default").withName("cgpu-test").get().getMetadata().getAnnotations();
    assertThat(annotations)
        .containsEntry("ALIYUN_COM_GPU_MEM_IDX", "0")
        .containsEntry("ALIYUN_COM_GPU_MEM_POD", "14")
        .containsEntry("ALIYUN_COM_GPU_MEM_DEV", "15")
        .containsEntry("ALIYUN_COM_GPU_MEM_ASSIGNED", "false")
        .containsEntry("gpu-admission.io/mutated", "shared-gpu-memory")
        .hasSize(6);
    var assumed = Long.parseLong(annotations.get("ALIYUN_COM_GPU_MEM_ASSUME_TIME"));
    assertThat(assumed).isBetween(before.getEpochSecond() * 1_000_000_000L, Instant.now().getEpochSecond() * 1_000_000_000L + 999_999_999L);
    assertThat(client.bindings().inNamespace("default").withName("cgpu-test").get().getTarget().getName()).isEqualTo("cn-beijing.i-cgpu-v100-a");
  }

  private String bindArgs(Pod pod, String node) {
    var args = Map.of("PodName", pod.getMetadata().getName(), "PodNamespace", pod.getMetadata().getNamespace(), "PodUID", pod.getMetadata().getUid(), "Node", node);
    return KubernetesJson.mapper().valueToTree(args).toString();
  }

  /** A fixture pod under another name: the mock API server keeps each Binding, and bind tests must not meet another's. */
  private Pod createFixturePod(String file, String name) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/" + file)), Pod.class);
    pod.getMetadata().setName(name);
    return client.resource(pod).createOr(existing -> existing.update());
  }

  /** What the API server does on a Binding (the CRUD mock only stores it): the pod gets its node. */
  private void bound(Pod pod, String node) {
    client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).edit(p -> {
      p.getSpec().setNodeName(node);
      return p;
    });
  }

  private void deleteWithItsBinding(Pod pod) {
    client.resource(pod).delete();
    client.bindings().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).delete();
  }

  @Test
  void bindsAPodWhoseOnlyGpuAskIsInAnInitContainer() {
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
    var pod = createFixturePod("pod-init-only-cgpu.yaml", "warmup-5g");
    try {
      var answer = post("/extender/bind", bindArgs(pod, "cn-beijing.i-cgpu-v100-a")).statusCode(200).extract().asString();

      assertThat(json(answer)).isEqualTo(json("{\"Error\":\"\"}"));
      var annotations = client.resource(pod).get().getMetadata().getAnnotations();
      assertThat(annotations).containsEntry("ALIYUN_COM_GPU_MEM_IDX", "0").containsEntry("ALIYUN_COM_GPU_MEM_POD", "5");
      bound(pod, "cn-beijing.i-cgpu-v100-a");
      // The informer shows the bound pod: the ledger holds its 5 GiB as read from the pod itself.
      await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claim(pod.getMetadata().getUid())
          .filter(c -> c.phase() == io.gpuadmission.placement.GpuClaim.Phase.BOUND).isPresent());
      assertThat(ledger.claim(pod.getMetadata().getUid()).orElseThrow().memory()).isEqualTo(5);
    } finally {
      deleteWithItsBinding(pod);
    }
  }

  @Test
  void aSecondBindOfABoundPodSaysWhereItIsBound() {
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
    var pod = createFixturePod("pod-cgpu-test.yaml", "cgpu-twice");
    try {
      assertThat(json(post("/extender/bind", bindArgs(pod, "cn-beijing.i-cgpu-v100-a")).statusCode(200).extract().asString()))
          .isEqualTo(json("{\"Error\":\"\"}"));
      bound(pod, "cn-beijing.i-cgpu-v100-a");
      await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claim(pod.getMetadata().getUid())
          .filter(c -> c.phase() == io.gpuadmission.placement.GpuClaim.Phase.BOUND).isPresent());

      var again = post("/extender/bind", bindArgs(pod, "cn-beijing.i-cgpu-v100-a")).statusCode(200).extract().asString();

      assertThat(json(again).path("Error").asText())
          .isEqualTo("pod default/cgpu-twice is already bound to node cn-beijing.i-cgpu-v100-a (GPU 0, 14GiB of aliyun.com/gpu-mem);"
              + " a pod is bound only once");
      assertThat(ledger.claimsOn("cn-beijing.i-cgpu-v100-a")).extracting(c -> c.gpus()).containsExactly(java.util.List.of(0));
    } finally {
      deleteWithItsBinding(pod);
    }
  }

  @Test
  void bindRefusesANodeOfAnotherPoolThanThePodSelects() {
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
    var pod = createFixturePod("pod-cgpu-test.yaml", "cgpu-elsewhere");
    try {
      var answer = post("/extender/bind", bindArgs(pod, "cn-beijing.i-topo-v100-a")).statusCode(200).extract().asString();

      assertThat(json(answer).path("Error").asText())
          .isEqualTo("cannot bind default/cgpu-elsewhere (14GiB of one GPU): node cn-beijing.i-topo-v100-a: its label"
              + " ack.node.gpu.schedule is \"topology\", the pod's nodeSelector asks \"cgpu\"");
      assertThat(client.resource(pod).get().getSpec().getNodeName()).isNull();
      assertThat(client.resource(pod).get().getMetadata().getAnnotations()).containsOnlyKeys("gpu-admission.io/mutated");
    } finally {
      deleteWithItsBinding(pod);
    }
  }

  /**
   * The API server stops answering the Lease (as under SIGSTOP) for longer than the renew deadline:
   * the replica stops binding, says so without naming itself as some other leader, and binds again
   * once the Lease calls get through, without a restart.
   */
  @Test
  void bindIsServedAgainAfterLeaseRenewalsStallPastTheRenewDeadline() {
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
    var pod = createFixturePod("pod-cgpu-test.yaml", "cgpu-lease-stall");
    var args = bindArgs(pod, "cn-beijing.i-cgpu-v100-a");
    var lease = "/apis/coordination.k8s.io/v1/namespaces/gpu-admission/leases/gpu-admission-placement";
    var stalled = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":503}";
    apiServer.expect().get().delay(10, java.util.concurrent.TimeUnit.MINUTES).withPath(lease).andReturn(503, stalled).always();
    apiServer.expect().patch().delay(10, java.util.concurrent.TimeUnit.MINUTES).withPath(lease).andReturn(503, stalled).always();
    try {
      // The tests' renew deadline is 5 s, their lease 8 s (application.properties): binding stops in between.
      await().atMost(Duration.ofSeconds(14)).until(() -> !gate.leading());
      var refused = json(post("/extender/bind", args).statusCode(200).extract().asString()).path("Error").asText();
      assertThat(refused)
          .doesNotContain("(leader: " + gate.identity() + ")")
          .matches("gpu-admission replica \\Q" + gate.identity() + "\\E could not renew the placement Lease .*; retry"
              + "|no gpu-admission replica holds the placement Lease now.*; retry");

      // Once its Lease has expired, nobody is named, and the wellness check and the gauges say so.
      await().atMost(Duration.ofSeconds(8)).until(() -> gate.leader().isEmpty());
      var expired = gate.formerLeader().orElseThrow().until().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
      assertThat(json(post("/extender/bind", args).statusCode(200).extract().asString()).path("Error").asText())
          .isEqualTo("no gpu-admission replica holds the placement Lease now (" + gate.identity() + "'s expired at " + expired
              + "); gpu-admission replica " + gate.identity() + " campaigns for it; retry");
      var well = json(SchedulerCaller.given().baseUri(base.toString()).get("/q/health/well").then().statusCode(503).extract().asString());
      var placement = well.path("checks").get(0);
      assertThat(placement.path("name").asText()).isEqualTo("placement");
      assertThat(placement.path("status").asText()).isEqualTo("DOWN");
      assertThat(placement.path("data").path("leader").asText()).isEmpty();
      assertThat(placement.path("data").path("leading").asBoolean()).isFalse();
      assertThat(placement.path("data").path("secondsWithoutLeader").asLong()).isNotNegative();
      assertThat(SchedulerCaller.given().baseUri(base.toString()).get("/q/metrics").asString())
          .contains("\ngpu_admission_placement_leader 0.0\n")
          .containsPattern("\ngpu_admission_placement_leaderless_seconds [0-9.E]+\n");
    } finally {
      apiServer.getKubernetesMockServer().clearExpectations();
    }

    await().atMost(Duration.ofSeconds(15)).until(gate::leading);
    var well = json(SchedulerCaller.given().baseUri(base.toString()).get("/q/health/well").then().statusCode(200).extract().asString());
    assertThat(well.path("checks").get(0).path("data").path("leader").asText()).isEqualTo(gate.identity());
    assertThat(SchedulerCaller.given().baseUri(base.toString()).get("/q/metrics").asString())
        .contains("\ngpu_admission_placement_leader 1.0\n").contains("\ngpu_admission_placement_leaderless_seconds 0.0\n");
    assertThat(json(post("/extender/bind", args).statusCode(200).extract().asString())).isEqualTo(json("{\"Error\":\"\"}"));
    assertThat(client.bindings().inNamespace("default").withName("cgpu-lease-stall").get().getTarget().getName()).isEqualTo("cn-beijing.i-cgpu-v100-a");
    deleteWithItsBinding(pod);
  }

  @Test
  void bindOfAPodWithoutGpusIsRefusedAndPlacesNothing() {
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
    var pod = client.resource(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName("cpu-victim").withNamespace("default").endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("busybox").endContainer().endSpec().build()).create();
    try {
      var args = Map.of("PodName", "cpu-victim", "PodNamespace", "default", "PodUID", pod.getMetadata().getUid(), "Node", CGPU_B);
      assertThat(json(post("/extender/bind", KubernetesJson.mapper().valueToTree(args).toString()).statusCode(200).extract().asString()))
          .isEqualTo(json("{\"Error\":\"pod default/cpu-victim asks for no GPU resource gpu-admission places; kube-scheduler binds it itself\"}"));
      assertThat(client.bindings().inNamespace("default").withName("cpu-victim").get()).isNull();
    } finally {
      client.resource(pod).delete();
    }
  }

  @Test
  void bindOfADeletedPodAnswersWithAnError() {
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);

    var answer = post("/extender/bind", "{\"PodName\":\"ghost\",\"PodNamespace\":\"default\",\"PodUID\":\"u\",\"Node\":\"" + CGPU_B + "\"}")
        .statusCode(200).extract().asString();

    assertThat(json(answer)).isEqualTo(json("{\"Error\":\"pod default/ghost not found: it was deleted before bind\"}"));
  }

  @Test
  void malformedBodiesGet400WithAReason() {
    assertThat(post("/extender/filter", "{").statusCode(400).extract().asString()).isEqualTo("{\"Error\":\"not JSON: Unexpected end-of-input: expected close marker for Object (start marker at line 1, column 1) at line 1, column 2\"}");
    assertThat(json(post("/extender/filter", "{\"NodeNames\":[\"a\"]}").statusCode(400).extract().asString()))
        .isEqualTo(json("{\"Error\":\"ExtenderArgs without a Pod (expected {\\\"Pod\\\": {...}, \\\"NodeNames\\\": [...]})\"}"));
    assertThat(json(post("/extender/prioritize", "{\"Pod\":{\"metadata\":{\"name\":\"p\"}}}").statusCode(400).extract().asString()))
        .isEqualTo(json("{\"Error\":\"ExtenderArgs without NodeNames or Nodes\"}"));
    assertThat(json(post("/extender/bind", "{\"PodName\":\"p\"}").statusCode(400).extract().asString()))
        .isEqualTo(json("{\"Error\":\"ExtenderBindingArgs needs PodName, PodNamespace, PodUID and Node\"}"));
    assertThat(json(post("/extender/bind", "{\"PodName\":\"p\",\"PodNamespace\":\"default\",\"Node\":\"n\"}").statusCode(400).extract().asString()))
        .isEqualTo(json("{\"Error\":\"ExtenderBindingArgs needs PodName, PodNamespace, PodUID and Node\"}"));
    assertThat(json(post("/extender/bind", "{\"PodName\":\"p/../x\",\"PodNamespace\":\"default\",\"PodUID\":\"u\",\"Node\":\"n\"}").statusCode(400).extract().asString()))
        .isEqualTo(json("{\"Error\":\"PodName \\\"p/../x\\\" is not a pod name (a DNS subdomain)\"}"));
    assertThat(json(post("/extender/bind", "{\"PodName\":\"p\",\"PodNamespace\":\"Default\",\"PodUID\":\"u\",\"Node\":\"n\"}").statusCode(400).extract().asString()))
        .isEqualTo(json("{\"Error\":\"PodNamespace \\\"Default\\\" is not a namespace name (a DNS label)\"}"));
    assertThat(json(post("/extender/bind", "[]").statusCode(400).extract().asString()).path("Error").asText())
        .isEqualTo("expected an ExtenderBindingArgs object, got an array at line 1, column 1");
  }

  @Test
  void aPodWhoseResourcesCannotBeReadGets400NotA500() {
    // Counted from the end of warm-up on: its own sample requests are no traffic.
    io.gpuadmission.support.WebhookCalls.awaitReady(base);
    var badQuantity =
        "{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
            + "{\"limits\":{\"aliyun.com/gpu-mem\":\"abc\"}}}]}},\"NodeNames\":[\"a\"]}";
    var nullContainer = "{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[null]}},\"NodeNames\":[\"a\"]}";

    assertThat(json(post("/extender/filter", badQuantity).statusCode(400).extract().asString()).path("Error").asText())
        .isEqualTo(
            "Pod \"p\": container \"c\": resources.limits[\"aliyun.com/gpu-mem\"] is \"abc\", not a quantity (a quantity is a"
                + " number with an optional suffix, such as 2, 500m, 16Gi or 1e3)");
    assertThat(json(post("/extender/prioritize", nullContainer).statusCode(400).extract().asString()).path("Error").asText())
        .isEqualTo("Pod.spec.containers[0] is null: an entry of a list cannot be empty (remove it, or give it its fields)");
    // The check reads only the Pod, wherever it stands among the arguments.
    var podLast = "{\"NodeNames\":[\"a\",\"b\"],\"Pod\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[null]}}}";
    assertThat(json(post("/extender/filter", podLast).statusCode(400).extract().asString()).path("Error").asText())
        .isEqualTo("Pod.spec.containers[0] is null: an entry of a list cannot be empty (remove it, or give it its fields)");
    var nullEnv = nullContainer.replace("[null]", "[{\"name\":\"c\",\"env\":[{\"name\":\"A\"},null]}]");
    assertThat(json(post("/extender/filter", nullEnv).statusCode(400).extract().asString()).path("Error").asText())
        .isEqualTo("Pod.spec.containers[0].env[1] is null: an entry of a list cannot be empty (remove it, or give it its fields)");
    assertThat(json(post("/extender/filter", "{\"Pod\":{\"metadata\":{\"name\":\"p\"}},\"NodeNames\":[\"a\",null]}")
            .statusCode(400).extract().asString()))
        .isEqualTo(json("{\"Error\":\"NodeNames[1] names no node\"}"));
    assertThat(SchedulerCaller.given().baseUri(base.toString()).get("/q/metrics").asString())
        .containsPattern("gpu_admission_extender_requests_total\\{outcome=\"malformed\",verb=\"filter\"} [1-9]")
        .containsPattern("gpu_admission_extender_requests_total\\{outcome=\"malformed\",verb=\"prioritize\"} [1-9]");
  }

  @Test
  void aSentNodeWhoseQuantityIsNoQuantityGets400NamingTheNodeAndField() {
    var args = "{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
        + "{\"limits\":{\"aliyun.com/gpu\":\"1\"}}}]}},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"gpu-a\"},"
        + "\"status\":{\"allocatable\":{\"aliyun.com/gpu\":\"lots\"}}}]}}";
    var error = "Node \"gpu-a\": status.allocatable[\"aliyun.com/gpu\"] is \"lots\", not a quantity (a quantity is a number with an"
        + " optional suffix, such as 2, 500m, 16Gi or 1e3)";

    assertThat(json(post("/extender/filter", args).statusCode(400).extract().asString()).path("Error").asText()).isEqualTo(error);
    assertThat(json(post("/extender/prioritize", args).statusCode(400).extract().asString()).path("Error").asText()).isEqualTo(error);
  }

  /**
   * A quantity fabric8's own parser throws on ({@code 1e3k}, {@code 1E3Ki}) gets the project's
   * wording, as {@code lots} does: each verb's 400 naming the container or node, the field and the
   * value, never fabric8's message, and never arithmetic on it.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0} {1}")
  @org.junit.jupiter.params.provider.CsvSource({"/extender/filter, 1e3k", "/extender/prioritize, 1E3Ki", "/extender/preempt, 1e3k"})
  void aQuantityFabric8CannotParseGets400NamingTheField(String verb, String value) {
    var pod = "{\"metadata\":{\"name\":\"p\",\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
        + "{\"requests\":{\"aliyun.com/gpu-mem\":\"" + value + "\"}}}]}}";
    var args = verb.endsWith("preempt") ? "{\"Pod\":" + pod + ",\"NodeNameToMetaVictims\":{}}" : "{\"Pod\":" + pod + ",\"NodeNames\":[\"a\"]}";

    assertThat(json(post(verb, args).statusCode(400).extract().asString()).path("Error").asText())
        .isEqualTo("Pod \"p\": container \"c\": resources.requests[\"aliyun.com/gpu-mem\"] is \"" + value + "\", not a quantity (a quantity"
            + " is a number with an optional suffix, such as 2, 500m, 16Gi or 1e3)");
  }

  @Test
  void aSentNodeWhoseQuantityFabric8CannotParseGets400NamingTheNodeAndField() {
    var args = "{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
        + "{\"limits\":{\"aliyun.com/gpu\":\"1\"}}}]}},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"gpu-a\"},"
        + "\"status\":{\"capacity\":{\"aliyun.com/gpu-mem\":\"1e3k\"}}}]}}";

    assertThat(json(post("/extender/filter", args).statusCode(400).extract().asString()).path("Error").asText())
        .isEqualTo("Node \"gpu-a\": status.capacity[\"aliyun.com/gpu-mem\"] is \"1e3k\", not a quantity (a quantity is a number with an"
            + " optional suffix, such as 2, 500m, 16Gi or 1e3)");
  }

  @Test
  void aPodFieldOfTheWrongTypeGets400NamingTheField() {
    var args = "{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"hostIPC\":\"yes\",\"containers\":[]}},\"NodeNames\":[\"a\"]}";

    assertThat(json(post("/extender/filter", args).statusCode(400).extract().asString()).path("Error").asText())
        .isEqualTo("Pod.spec.hostIPC: expected true or false, got the string \"yes\" at line 1, column 51");
  }

  @Test
  void inspectShowsEachGpuWithItsPods() {
    var node = SchedulerCaller.given().baseUri(base.toString()).get("/extender/inspect/" + CGPU_B).then().statusCode(200).extract().asString();
    var all = SchedulerCaller.given().baseUri(base.toString()).get("/gpushare-scheduler/inspect").then().statusCode(200).extract().asString();

    assertThat(json(node)).isEqualTo(json(fixture("inspect-cgpu-v100-b.expected.json")));
    var names = new java.util.ArrayList<String>();
    json(all).path("nodes").forEach(n -> names.add(n.path("name").asText()));
    assertThat(names)
        .containsExactly(
            "cn-beijing.i-2ze8o1a45qdv5q8a7luz", "cn-beijing.i-cgpu-v100-a", CGPU_B, "cn-beijing.i-topo-v100-a");
    SchedulerCaller.given().baseUri(base.toString()).get("/extender/inspect/no-such-node").then().statusCode(404);
    // FGD's learned workload: the informer's pods (the four 12 GiB shares running on cgpu-v100-b
    // among them), whatever else the other tests asked about.
    var workload = json(all).path("fgdWorkload");
    assertThat(workload.path("source").asText()).isEqualTo("learned");
    assertThat(workload.path("learnedWindowMinutes").asInt()).isEqualTo(60);
    assertThat(workload.path("pods").asInt()).isGreaterThanOrEqualTo(4);
    var twelve = new java.util.ArrayList<JsonNode>();
    workload.path("asks").forEach(ask -> {
      if (ask.path("ask").asText().equals("12GiB of one GPU")) {
        twelve.add(ask);
      }
    });
    assertThat(twelve).hasSize(1);
    assertThat(twelve.get(0).path("gpuMemory").asLong()).isEqualTo(12);
    assertThat(twelve.get(0).path("cpu").asLong()).isZero();
    assertThat(twelve.get(0).path("weight").asDouble()).isEqualTo(4.0);
  }

  @Test
  void aPodWhoseNodeGaveOtherGpusIsCountedInTheLedgerShownAndMeasured() {
    var topology = "cn-beijing.i-topo-v100-a";
    var pod = client.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.agentPath("node/pod-bert-worker-0.yaml")), Pod.class))
        .create();
    try {
      var uid = pod.getMetadata().getUid();
      await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claim(uid).map(c -> c.gpus().equals(java.util.List.of(0, 3))).orElse(false));

      // What the node agent writes once the kubelet says the pod got GPUs 1 and 2 (NodeAgentTest).
      client.pods().inNamespace("ml-team-a").withName("bert-worker-0")
          .edit(p -> new io.fabric8.kubernetes.api.model.PodBuilder(p).editMetadata()
              .addToAnnotations("gpu-admission.io/gpu-allocated", "1,2").endMetadata().build());

      await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claim(uid).map(c -> c.gpus().equals(java.util.List.of(1, 2))).orElse(false));
      var inspect = json(SchedulerCaller.given().baseUri(base.toString()).get("/extender/inspect").then().statusCode(200).extract().asString());
      assertThat(inspect.path("overridden")).isEqualTo(json(
          "[{\"namespace\":\"ml-team-a\",\"name\":\"bert-worker-0\",\"node\":\"" + topology + "\",\"asked\":[0,3],\"given\":[1,2]}]"));
      var node = json(SchedulerCaller.given().baseUri(base.toString()).get("/extender/inspect/" + topology).then().statusCode(200).extract().asString());
      assertThat(node.path("devs").findValues("pods")).extracting(pods -> pods.findValuesAsText("name"))
          .containsExactly(java.util.List.of(), java.util.List.of("bert-worker-0"), java.util.List.of("bert-worker-0"), java.util.List.of(),
              java.util.List.of(), java.util.List.of(), java.util.List.of(), java.util.List.of());
      assertThat(SchedulerCaller.given().baseUri(base.toString()).get("/q/metrics").asString())
          .contains("gpu_admission_gpu_choice_overridden_total{node=\"" + topology + "\"} 1.0");
    } finally {
      client.resource(pod).delete();
      await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claimsOn(topology).isEmpty());
    }
    assertThat(json(SchedulerCaller.given().baseUri(base.toString()).get("/extender/inspect").then().extract().asString())
        .path("overridden")).isEmpty();
  }

  /** kube-scheduler's ExtenderArgs for a pod as the API server has it, over every fixture node. */
  private String argsFor(String namespace, String name) {
    var json = KubernetesJson.mapper().createObjectNode();
    json.set("Pod", KubernetesJson.mapper().valueToTree(client.pods().inNamespace(namespace).withName(name).get()));
    var names = json.putArray("NodeNames");
    NODES.forEach(names::add);
    return json.toString();
  }

  private static final java.util.List<String> NODES =
      java.util.List.of("cn-beijing.i-2ze8o1a45qdv5q8a7luz", "cn-beijing.i-cgpu-v100-a", CGPU_B, "cn-beijing.i-topo-v100-a", "cn-beijing.i-cpu-a");

  private Pod gangPod(String role) {
    return client.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/gang-" + role + ".yaml")), Pod.class)).create();
  }

  @Test
  void theSeedsPyTorchJobWaitsForBothMembersThenBindsWherePlanned() {
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
    var master = gangPod("master");
    try {
      var waiting = json(post("/extender/filter", argsFor("ml-gang", "pytorch-dist-nccl-master-0")).statusCode(200).extract().asString());
      assertThat(waiting.path("NodeNames")).isEmpty();
      assertThat(waiting.path("FailedAndUnresolvableNodes").size()).isEqualTo(NODES.size());
      assertThat(waiting.path("FailedAndUnresolvableNodes").path("cn-beijing.i-topo-v100-a").asText())
          .isEqualTo("gang \"ml-gang/pytorch-dist-nccl\": 1 of 2 members exist, waiting for the rest");

      var worker = gangPod("worker");
      await().atMost(Duration.ofSeconds(10)).until(() -> java.util.stream.Stream.of(master, worker)
          .allMatch(p -> io.gpuadmission.placement.MemberPlan.of(client.resource(p).get()).isPresent()));
      var places = java.util.stream.Stream.of(master, worker)
          .map(p -> io.gpuadmission.placement.MemberPlan.of(client.resource(p).get()).orElseThrow().place()).toList();
      assertThat(places).containsExactly("cn-beijing.i-topo-v100-a GPU 0", "cn-beijing.i-topo-v100-a GPU 1");

      var planned = json(post("/gpushare-scheduler/filter", argsFor("ml-gang", "pytorch-dist-nccl-worker-0")).statusCode(200).extract().asString());
      assertThat(planned.path("NodeNames").toString()).isEqualTo("[\"cn-beijing.i-topo-v100-a\"]");
      assertThat(planned.path("FailedAndUnresolvableNodes").path(CGPU_B).asText())
          .isEqualTo("gang \"ml-gang/pytorch-dist-nccl\": this member is planned on cn-beijing.i-topo-v100-a GPU 1");

      for (var pod : java.util.List.of(master, worker)) {
        var args = Map.of("PodName", pod.getMetadata().getName(), "PodNamespace", "ml-gang", "PodUID", pod.getMetadata().getUid(), "Node", "cn-beijing.i-topo-v100-a");
        assertThat(json(post("/extender/bind", KubernetesJson.mapper().valueToTree(args).toString()).statusCode(200).extract().asString()))
            .isEqualTo(json("{\"Error\":\"\"}"));
      }
      var indices = java.util.stream.Stream.of(master, worker)
          .map(p -> client.resource(p).get().getMetadata().getAnnotations().get("gpu-admission.io/gpu-indices")).toList();
      assertThat(indices).containsExactly("0", "1");
      var inspect = json(SchedulerCaller.given().baseUri(base.toString()).get("/extender/inspect").then().statusCode(200).extract().asString());
      var gang = inspect.path("gangs").get(0);
      assertThat(gang.path("namespace").asText() + "/" + gang.path("job").asText()).isEqualTo("ml-gang/pytorch-dist-nccl");
      assertThat(gang.path("members").get(1).path("planned").asText()).isEqualTo("cn-beijing.i-topo-v100-a GPU 1");
    } finally {
      client.pods().inNamespace("ml-gang").delete();
      await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claimsOn("cn-beijing.i-topo-v100-a").isEmpty());
    }
  }
}
