package io.gpuadmission.cluster;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.SchedulerCaller;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A cluster without the ElasticQuotaTree CRD (every kustomize base install, every cluster without
 * quotas, {@code helm install --skip-crds}): the webhook is Ready, quotas are off with the reason in
 * health and in {@code /extender/inspect}, and they switch on, without a restart, once the CRD is
 * installed.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.WithoutQuotaCrd.class)
class QuotasWithoutCrdTest {
  private static final String NOT_SERVED = "the cluster does not serve ElasticQuotaTree (scheduling.sigs.k8s.io/v1beta1, resource"
      + " elasticquotatrees): no CRD elasticquotatrees.scheduling.sigs.k8s.io; checked again every 1 s, and used without a restart"
      + " once it is installed";

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;

  @Test
  void readyWithQuotasOffAndTheReasonThenOnOnceTheCrdIsInstalled() {
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> given().relaxedHTTPSValidation().baseUri(base.toString())
        .get("/q/health/ready").then().statusCode(200));
    var quotaCheck = quotaCheck();
    assertThat(quotaCheck.path("status").asText()).isEqualTo("UP");
    assertThat(quotaCheck.path("data").path("quotas").asText()).isEqualTo("off");
    assertThat(quotaCheck.path("data").path("reason").asText()).isEqualTo(NOT_SERVED);
    assertThat(quotaCheck.path("data").path("tree").asText()).isEqualTo("none");
    var inspected = inspection();
    assertThat(inspected.path("enabled").asBoolean()).isTrue();
    assertThat(inspected.path("active").asBoolean()).isFalse();
    assertThat(inspected.path("reason").asText()).isEqualTo(NOT_SERVED);

    ClusterFixtures.installQuotaCrd(client);

    await().atMost(Duration.ofSeconds(15)).until(() -> quotaCheck().path("data").path("quotas").asText().equals("on"));
    assertThat(quotaCheck().path("data").has("reason")).isFalse();
    client.genericKubernetesResources(QuotaTreeWatcher.TREES).inNamespace("kube-system").resource(tree()).create();
    await().atMost(Duration.ofSeconds(15)).until(() -> inspection().path("tree").asText().equals("kube-system/quotas"));
    assertThat(inspection().path("active").asBoolean()).isTrue();
    assertThat(inspection().path("reason").asText()).isEmpty();
    assertThat(inspection().path("quotas").findValuesAsText("name")).containsExactly("root", "team-a", "team-b", "team-c");
  }

  private JsonNode quotaCheck() {
    var health = json(given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/ready").then().extract().asString());
    for (var check : health.path("checks")) {
      if (check.path("name").asText().equals("quota-tree")) {
        return check;
      }
    }
    throw new AssertionError("no quota-tree check in " + health);
  }

  private JsonNode inspection() {
    return json(SchedulerCaller.given().baseUri(base.toString()).get("/extender/inspect").then().statusCode(200).extract().asString())
        .path("quotas");
  }

  private static GenericKubernetesResource tree() {
    return KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/tree.yaml")), GenericKubernetesResource.class);
  }

  private static JsonNode json(String text) {
    try {
      return KubernetesJson.mapper().readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
