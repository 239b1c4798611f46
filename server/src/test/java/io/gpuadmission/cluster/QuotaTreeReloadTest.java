package io.gpuadmission.cluster;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The ElasticQuotaTree: refused at apply when it breaks ACK's rules; if one arrives anyway, the last good tree stays. */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class QuotaTreeReloadTest {
  private static final Duration WITHIN = Duration.ofSeconds(10);
  private static final ResourceDefinitionContext TREES = new ResourceDefinitionContext.Builder()
      .withGroup(QuotaTreeWatcher.GROUP).withVersion(QuotaTreeWatcher.VERSION).withKind(QuotaTreeWatcher.KIND)
      .withPlural(QuotaTreeWatcher.PLURAL).withNamespaced(true).build();
  private static final String BROKEN = "spec.root (root): its children's min nvidia.com/gpu sum to 10 > its min 8;"
      + " spec.root.children[0] (team-a): min nvidia.com/gpu 6 > max 4;"
      + " spec.root.children[1] (team-b): namespace quota-a is already in leaf team-a";

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject QuotaTreeStore store;
  @Inject io.gpuadmission.policy.PolicyStore policies;

  @AfterEach
  void deleteTheTree() {
    policies.replace(io.gpuadmission.policy.PolicyParser.builtInDefault(), io.gpuadmission.policy.PolicyStore.PolicySource.DEFAULT);
    client.genericKubernetesResources(TREES).inNamespace("kube-system").delete();
    await().atMost(WITHIN).until(() -> store.tree().isEmpty());
  }

  @Test
  void aTreeBreakingTheRulesIsRefusedAtApplyWithEachRuleAndItsPath() {
    var response = validate(Fixtures.yamlTree(Fixtures.path("quota/tree-broken.yaml")));

    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("message").asText())
        .isEqualTo("ElasticQuotaTree \"quotas\": the quota tree breaks ACK's rules: " + BROKEN);
    assertThat(validate(Fixtures.yamlTree(Fixtures.path("quota/tree.yaml"))).path("allowed").asBoolean()).isTrue();
  }

  @Test
  void aTreeOutsideKubeSystemIsNotTheClustersTreeAndPasses() {
    var elsewhere = (com.fasterxml.jackson.databind.node.ObjectNode) Fixtures.yamlTree(Fixtures.path("quota/tree-broken.yaml"));
    ((com.fasterxml.jackson.databind.node.ObjectNode) elsewhere.path("metadata")).put("namespace", "default");

    assertThat(validate(elsewhere).path("allowed").asBoolean()).isTrue();
  }

  @Test
  void aBrokenTreeThatArrivesAnywayLeavesTheLastGoodTreeInForce() {
    client.genericKubernetesResources(TREES).inNamespace("kube-system").resource(tree("quota/tree.yaml")).create();
    await().atMost(WITHIN).until(() -> store.tree().isPresent());
    assertThat(store.source()).isEqualTo("kube-system/quotas");
    // The counter counts for the application's life, which other test classes share.
    var failuresBefore = store.failures();

    client.genericKubernetesResources(TREES).inNamespace("kube-system").resource(tree("quota/tree-broken.yaml")).update();

    // The store's own state first: an Event of the same text may already be in the mock API server
    // from another test of this class, so the Event alone does not say this update was read.
    await().atMost(WITHIN).until(() -> store.lastError().isPresent());
    assertThat(store.lastError()).contains(BROKEN);
    await().atMost(WITHIN).until(() -> client.v1().events().inNamespace("kube-system").list().getItems().stream()
        .anyMatch(e -> "InvalidQuotaTree".equals(e.getReason())
            && e.getMessage().equals("quota tree not loaded, the previous one stays in force: " + BROKEN)));
    assertThat(store.tree().orElseThrow().leafOf("quota-a").orElseThrow().max()).isEqualTo(QuotaResources.of("nvidia.com/gpu", 6, "aliyun.com/gpu-mem", 24));
    assertThat(metrics()).contains("gpu_admission_quota_tree_invalid 1.0");
    await().atMost(Duration.ofSeconds(90)).untilAsserted(() ->
        given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200)
            .body("checks.find { it.name == 'quota-tree' }.data.lastReloadError", org.hamcrest.Matchers.equalTo(BROKEN)));

    client.genericKubernetesResources(TREES).inNamespace("kube-system").resource(tree("quota/tree.yaml")).update();
    await().atMost(WITHIN).until(() -> store.lastError().isEmpty());
    assertThat(store.failures()).isEqualTo(failuresBefore + 1);
    assertThat(metrics()).contains("gpu_admission_quota_tree_invalid 0.0")
        .contains("gpu_admission_quota_tree_reload_failures_total " + (double) (failuresBefore + 1));
  }

  /**
   * As on a replica that starts while the tree in the cluster is broken (the webhook was down when
   * it was applied): no good tree was ever read, so no quota applies, and health says so rather
   * than claim a last good tree is kept.
   */
  @Test
  void aBrokenTreeWithNoGoodTreeBeforeItLeavesQuotasOffAndSaysWhy() {
    client.genericKubernetesResources(TREES).inNamespace("kube-system").resource(tree("quota/tree-broken.yaml")).create();

    await().atMost(WITHIN).until(() -> store.lastError().isPresent());
    assertThat(store.tree()).isEmpty();
    var message = "quota tree not loaded, no good tree was read before it, so no team quota applies until it is fixed: " + BROKEN;
    await().atMost(WITHIN).until(() -> client.v1().events().inNamespace("kube-system").list().getItems().stream()
        .anyMatch(e -> "InvalidQuotaTree".equals(e.getReason()) && e.getMessage().equals(message)));
    await().atMost(Duration.ofSeconds(90)).untilAsserted(() ->
        given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200)
            .body("checks.find { it.name == 'quota-tree' }.data.quotas", org.hamcrest.Matchers.equalTo("off"))
            .body("checks.find { it.name == 'quota-tree' }.data.tree", org.hamcrest.Matchers.equalTo("none"))
            .body("checks.find { it.name == 'quota-tree' }.data.reason", org.hamcrest.Matchers.equalTo("the ElasticQuotaTree breaks the tree's"
                + " rules and no good tree was read before it, so no team quota applies until it is fixed: " + BROKEN)));

    client.genericKubernetesResources(TREES).inNamespace("kube-system").resource(tree("quota/tree.yaml")).update();
    await().atMost(WITHIN).until(() -> store.tree().isPresent() && store.lastError().isEmpty());
    await().atMost(Duration.ofSeconds(90)).untilAsserted(() ->
        given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200)
            .body("checks.find { it.name == 'quota-tree' }.data.quotas", org.hamcrest.Matchers.equalTo("on"))
            .body("checks.find { it.name == 'quota-tree' }.data.tree", org.hamcrest.Matchers.equalTo("kube-system/quotas")));
  }

  @Test
  void aPodAskingMoreThanItsTeamsMaxIsWarnedOfOrRefusedByPolicy() throws Exception {
    client.genericKubernetesResources(TREES).inNamespace("kube-system").resource(tree("quota/tree.yaml")).create();
    await().atMost(WITHIN).until(() -> store.tree().isPresent());
    var pod = (com.fasterxml.jackson.databind.node.ObjectNode) Fixtures.yamlTree(Fixtures.path("quota/pod-whole.yaml"));
    ((com.fasterxml.jackson.databind.node.ObjectNode) pod.path("spec").path("containers").get(0).path("resources").path("limits"))
        .put("nvidia.com/gpu", "6");
    var problem = "quota team-c: nvidia.com/gpu asks 6 > max 4, so it can never run in namespace quota-c (ElasticQuotaTree spec.root.children[2])";

    var warned = validate(pod);
    assertThat(warned.path("allowed").asBoolean()).isTrue();
    // Beside the feasibility warning of this cluster, which has no node offering nvidia.com/gpu.
    assertThat(warned.path("warnings")).extracting(JsonNode::asText)
        .contains("gpu-admission: " + problem + "; admitted as policy quotas.onNeverFits is warn: it stays Pending");

    policies.replace(io.gpuadmission.policy.PolicyParser.parse("quotas:\n  onNeverFits: refuse\n"), io.gpuadmission.policy.PolicyStore.PolicySource.CONFIGMAP);
    var refused = validate(pod);
    assertThat(refused.path("allowed").asBoolean()).isFalse();
    assertThat(refused.path("status").path("message").asText()).isEqualTo("Pod \"train-0\": " + problem);

    var gang = Fixtures.yamlTree(Fixtures.path("quota/gang-member.yaml"));
    assertThat(validate(gang).path("status").path("message").asText())
        .isEqualTo("Pod \"trainer-worker-0\": quota team-c: nvidia.com/gpu its gang of 3 asks 6 > max 4, so it can never run in namespace"
            + " quota-c (ElasticQuotaTree spec.root.children[2])");
  }

  private static GenericKubernetesResource tree(String file) {
    return KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(file)), GenericKubernetesResource.class);
  }

  private JsonNode validate(JsonNode object) {
    var body = given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON).body(Reviews.create("u-tree", object))
        .post("/validate").then().statusCode(200).extract().asByteArray();
    try {
      return KubernetesJson.mapper().readTree(body).path("response");
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private String metrics() {
    return given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/metrics").then().extract().asString();
  }
}
