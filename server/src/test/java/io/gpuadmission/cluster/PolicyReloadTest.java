package io.gpuadmission.cluster;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.policy.PolicyStore.PolicySource;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** The policy ConfigMap drives the webhook: created, updated, broken, deleted. */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class PolicyReloadTest {
  private static final Duration WITHIN = Duration.ofSeconds(5);

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject PolicyStore store;

  private static ConfigMap policy(String yaml) {
    return new ConfigMapBuilder()
        .withNewMetadata().withName("gpu-admission-policy").withNamespace("gpu-admission").endMetadata()
        .addToData("policy.yaml", yaml)
        .build();
  }

  private JsonNode post(String path, String review) {
    var body = given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON).body(review)
        .post(path).then().statusCode(200).extract().asByteArray();
    try {
      return KubernetesJson.mapper().readTree(body);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The nodeSelector model the webhook gives tf-notebook in ml-team-a, or "" when none. */
  private String modelPinnedForNotebook() {
    var review = Reviews.create("u-notebook", Fixtures.yamlTree(Fixtures.path("mutation/tf-notebook-pod-namespace-default/pod.yaml")));
    var patch = post("/mutate", review).path("response").path("patch").asText("");
    if (patch.isEmpty()) {
      return "";
    }
    var ops = new String(Base64.getDecoder().decode(patch), StandardCharsets.UTF_8);
    try {
      for (var op : KubernetesJson.mapper().readTree(ops)) {
        if (op.path("path").asText().equals("/spec/nodeSelector")) {
          return op.path("value").path("aliyun.accelerator/nvidia_name").asText();
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return "";
  }

  private String metrics() {
    return given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/metrics").then().extract().asString();
  }

  @Test
  void followsTheConfigMapThroughCreateUpdateInvalidAndDelete() {
    assertThat(modelPinnedForNotebook()).isEmpty();

    client.resource(policy("gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-M40\n")).create();
    await().atMost(WITHIN).until(() -> modelPinnedForNotebook().equals("Tesla-M40"));
    assertThat(store.active().source()).isEqualTo(PolicySource.CONFIGMAP);

    client.resource(policy("gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-V100-SXM2-16GB\n")).update();
    await().atMost(WITHIN).until(() -> modelPinnedForNotebook().equals("Tesla-V100-SXM2-16GB"));
    var generation = store.active().generation();

    client.resource(policy("topology:\n  allowedNamespaces: [Team_A]\n")).update();
    var expected = "line 2: topology.allowedNamespaces[0]: \"Team_A\" is not a valid namespace name";
    await().atMost(WITHIN).until(() -> client.v1().events().inNamespace("gpu-admission").list().getItems().stream()
        .anyMatch(e -> "InvalidPolicy".equals(e.getReason()) && e.getMessage().endsWith(expected)));
    assertThat(store.active().generation()).isEqualTo(generation);
    assertThat(modelPinnedForNotebook()).isEqualTo("Tesla-V100-SXM2-16GB");
    assertThat(metrics()).contains("policy_reload_failures_total 1.0").contains("policy_source{source=\"configmap\"} 1.0");
    // Ready once warm-up is over (seconds on a loaded machine); the policy check itself is always up.
    await().atMost(Duration.ofSeconds(90)).untilAsserted(() ->
        given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200)
            .body("checks.find { it.name == 'policy' }.data.lastReloadError", org.hamcrest.Matchers.equalTo(expected)));
    assertThat(metrics()).contains("policy_last_reload_failed 1.0");

    client.resource(policy("gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-M40\n")).update();
    // The policy is in force a moment before its reload is counted a success: wait for both.
    await().atMost(WITHIN).untilAsserted(() -> {
      assertThat(modelPinnedForNotebook()).isEqualTo("Tesla-M40");
      assertThat(metrics()).contains("policy_last_reload_failed 0.0");
    });
    assertThat(metrics()).contains("policy_reload_failures_total 1.0");

    client.resource(policy("gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-V100-SXM2-16GB\n")).delete();
    await().atMost(WITHIN).until(() -> store.active().source() == PolicySource.DEFAULT);
    assertThat(modelPinnedForNotebook()).isEmpty();
    assertThat(metrics()).contains("policy_source{source=\"default\"} 1.0");
  }

  @Test
  void refusesInvalidPolicyConfigMapAtApplyWithTheParsersMessage() {
    var configMap = KubernetesJson.mapper().valueToTree(policy("allocator:\n  memoryShare: tightest\n"));

    var response = post("/validate", Reviews.create("u-policy", configMap)).path("response");

    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("message").asText())
        .isEqualTo(
            "ConfigMap \"gpu-admission-policy\": policy.yaml is not a valid policy: line 2: allocator.memoryShare:"
                + " \"tightest\" is not one of [binpack, spread, fgd, fgd-cpu, fgd-lookahead]");
  }

  @Inject NodeInventory nodes;

  @Test
  void warnsAtApplyOfASharePlacementNoNodeOfASharePoolCarries() {
    await().atMost(WITHIN).until(() -> nodes.nodes().size() == 5);
    var configMap = KubernetesJson.mapper().valueToTree(policy(Fixtures.text(Fixtures.path("validation/policy-placement-spread.yaml"))));

    var response = post("/validate", Reviews.create("u-placement", configMap)).path("response");

    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(response.path("warnings"))
        .extracting(JsonNode::asText)
        .containsExactly(
            "gpu-admission: sharedMemory.placement is spread but no GPU node of pool \"cgpu\" carries ack.node.gpu.placement=spread"
                + " (there: binpack on 2 nodes): its share pods will be refused until one does; label the nodes that should place shares so",
            "gpu-admission: sharedMemory.placement is spread but no GPU node of pool \"share\" carries ack.node.gpu.placement=spread"
                + " (there: none on 1 node): its share pods will be refused until one does; label the nodes that should place shares so");
  }
}
