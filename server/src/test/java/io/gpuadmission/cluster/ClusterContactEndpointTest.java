package io.gpuadmission.cluster;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import java.net.URL;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Contact with the API server shows in readiness data and metrics (ApiServerOutageTest takes it away). */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class ClusterContactEndpointTest {
  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Test
  void reportsContactWithTheApiServerInReadinessDataAndMetrics() {
    await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
        given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200)
            .body("checks.find { it.name == 'cluster' }.status", equalTo("UP"))
            .body("checks.find { it.name == 'cluster' }.data.configured", equalTo(true))
            .body("checks.find { it.name == 'cluster' }.data.connected", equalTo(true))
            .body("checks.find { it.name == 'cluster' }.data.secondsSinceContact", equalTo(0)));
    given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/metrics").then().statusCode(200)
        .body(containsString("gpu_admission_cluster_connected 1.0"))
        .body(containsString("gpu_admission_cluster_seconds_since_contact_seconds 0.0"));
  }
}
