package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.SchedulerCaller;
import io.gpuadmission.support.TrustAnything;
import io.gpuadmission.support.WebhookCalls;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The extender's wire contract against the packaged server (the native executable in the native
 * build) and the mock API server: the answers {@link ExtenderEndpointTest} pins in process, here
 * over HTTPS with kube-scheduler's client certificate, the cluster read through the server's own
 * informers, and a bind that writes its annotations and Binding to the API server. What the test
 * knows of the server is only what it answers (no bean of it is reachable from here).
 */
@QuarkusIntegrationTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class ExtenderEndpointNativeIT {
  private static final String CGPU_A = "cn-beijing.i-cgpu-v100-a";
  private static final String CGPU_B = "cn-beijing.i-cgpu-v100-b";

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @KubernetesTestServer KubernetesServer apiServer;

  /** The four bound shares of ExtenderEndpointTest fill cgpu-v100-b; ready once the ledger shows them. */
  @BeforeEach
  void fourPodsFillCgpuB() {
    var client = apiServer.getClient();
    var list = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/bound-pods.yaml")), KubernetesList.class);
    for (HasMetadata item : list.getItems()) {
      client.resource(item).createOr(existing -> existing.update());
    }
    WebhookCalls.awaitReady(base);
    await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> inspect(CGPU_B).path("devs").findValues("pods").stream().mapToInt(JsonNode::size).sum() == 4);
  }

  @Test
  void filtersWithReasonsAndPrioritizesZeroToTen() {
    for (var prefix : new String[] {"/extender", "/gpushare-scheduler"}) {
      assertThat(post(prefix + "/filter", fixture("filter-args-node-names.json"))).as(prefix).isEqualTo(json(fixture("filter-node-names.expected.json")));
    }
    assertThat(post("/gpushare-scheduler/prioritize", fixture("filter-args-node-names.json"))).isEqualTo(json(fixture("prioritize.expected.json")));
    assertThat(inspect(CGPU_B)).isEqualTo(json(fixture("inspect-cgpu-v100-b.expected.json")));
  }

  @Test
  void bindWritesTheChosenGpuOnThePodAndBindsIt() {
    var client = apiServer.getClient();
    await().atMost(Duration.ofSeconds(60)).until(() -> placement().path("leading").asBoolean());
    var pod = client.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/pod-cgpu-test.yaml")), Pod.class))
        .createOr(existing -> existing.update());
    var before = Instant.now();
    try {
      var args = Map.of("podName", "cgpu-test", "podNamespace", "default", "podUID", pod.getMetadata().getUid(), "node", CGPU_A);

      assertThat(post("/extender/bind", KubernetesJson.mapper().valueToTree(args).toString())).isEqualTo(json("{\"Error\":\"\"}"));
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
      assertThat(client.bindings().inNamespace("default").withName("cgpu-test").get().getTarget().getName()).isEqualTo(CGPU_A);
    } finally {
      client.pods().inNamespace("default").withName("cgpu-test").delete();
      client.bindings().inNamespace("default").withName("cgpu-test").delete();
    }
  }

  @Test
  void refusesACallerWithoutKubeSchedulersCertificateAndCountsIt() {
    var before = refusals("no_certificate");

    var answer = SchedulerCaller.given(TrustAnything.contextUnchecked()).baseUri(base.toString()).contentType(ContentType.JSON)
        .body(fixture("filter-args-node-names.json")).post("/extender/filter");

    assertThat(answer.statusCode()).isEqualTo(401);
    assertThat(answer.contentType()).startsWith("application/json");
    assertThat(answer.jsonPath().getString("Error")).isEqualTo(
        "the extender takes calls from kube-scheduler only: present its client certificate (tlsConfig certFile/keyFile in the extender stanza)");
    assertThat(refusals("no_certificate")).isEqualTo(before + 1);
  }

  private JsonNode post(String path, String body) {
    return json(SchedulerCaller.given().baseUri(base.toString()).contentType(ContentType.JSON).body(body).post(path)
        .then().statusCode(200).extract().asString());
  }

  private JsonNode inspect(String node) {
    return json(SchedulerCaller.given().baseUri(base.toString()).get("/extender/inspect/" + node).then().statusCode(200).extract().asString());
  }

  /** The placement check's data (a wellness check, /q/health/well): whether this replica holds the Lease. */
  private JsonNode placement() {
    var ready = json(SchedulerCaller.given(TrustAnything.contextUnchecked()).baseUri(base.toString()).get("/q/health/well").asString());
    for (var check : ready.path("checks")) {
      if (check.path("name").asText().equals("placement")) {
        return check.path("data");
      }
    }
    return json("{}");
  }

  private double refusals(String reason) {
    var matcher = Pattern.compile("gpu_admission_extender_refusals_total\\{reason=\"" + reason + "\"} ([0-9.E]+)").matcher(WebhookCalls.metrics(base));
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
  }

  private static String fixture(String name) {
    return Fixtures.text(Fixtures.path("extender/" + name));
  }

  private static JsonNode json(String text) {
    try {
      return KubernetesJson.mapper().readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
