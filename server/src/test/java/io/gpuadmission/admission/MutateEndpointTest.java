package io.gpuadmission.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.net.URL;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The HTTP contract of /mutate, over HTTPS, with whole AdmissionReview responses compared. */
@QuarkusTest
class MutateEndpointTest {
  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "pod-topology-worker",
        "pod-topology-worker-dry-run",
        "pod-topology-worker-update",
        "deployment-tf-notebook",
        "pod-cpu-gpu-model-selector"
      })
  void answersReviewWithExpectedResponse(String name) {
    var body =
        given()
            .relaxedHTTPSValidation()
            .baseUri(base.toString())
            .contentType(ContentType.JSON)
            .body(Fixtures.text(Fixtures.path("reviews/" + name + ".json")))
            .post("/mutate")
            .then()
            .statusCode(200)
            .contentType(ContentType.JSON)
            .extract()
            .asByteArray();
    assertThat(tree(body)).isEqualTo(Fixtures.jsonTree(Fixtures.path("reviews/" + name + ".expected.json")));
  }

  @Test
  void rejectsBodyThatIsNotJsonWith400AndReason() {
    given()
        .relaxedHTTPSValidation()
        .baseUri(base.toString())
        .contentType(ContentType.JSON)
        .body("{not json")
        .post("/mutate")
        .then()
        .statusCode(400)
        .body("code", equalTo(400))
        .body("reason", equalTo("BadRequest"))
        .body(
            "message",
            equalTo(
                "body is not JSON: Unexpected character ('n' (code 110)): was expecting double-quote to start field name"
                    + " at line 1, column 2"));
  }

  @Test
  void rejectsJsonThatIsNotAnAdmissionReviewWith400() {
    given()
        .relaxedHTTPSValidation()
        .baseUri(base.toString())
        .contentType(ContentType.JSON)
        .body("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}")
        .post("/mutate")
        .then()
        .statusCode(400)
        .body("message", equalTo("kind is \"Pod\": expected AdmissionReview"));
  }

  @Test
  void rejectsV1beta1ReviewWith400NamingTheFix() {
    given()
        .relaxedHTTPSValidation()
        .baseUri(base.toString())
        .contentType(ContentType.JSON)
        .body("{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\"}}")
        .post("/mutate")
        .then()
        .statusCode(400)
        .body(
            "message",
            equalTo(
                "apiVersion is \"admission.k8s.io/v1beta1\": this webhook serves admission.k8s.io/v1"
                    + " (set admissionReviewVersions: [v1])"));
  }


  /** Warm-up's detail once done: the in-process rounds and the HTTPS round on the JVM, the HTTPS round alone natively (MutateEndpointIT). */
  private static org.hamcrest.Matcher<String> warmedUp() {
    return io.gpuadmission.testing.PackagedApp.isNative()
        ? org.hamcrest.Matchers.matchesPattern("HTTPS self-request on port \\d+ done")
        : org.hamcrest.Matchers.matchesPattern("in-process and HTTPS self-request on port \\d+ done \\(in-process \\d+ rounds in \\d+ ms\\)");
  }

  @Test
  void turnsReadyAfterWarmUpAndCountsRequestsInMetrics() {
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                given()
                    .relaxedHTTPSValidation()
                    .baseUri(base.toString())
                    .get("/q/health/ready")
                    .then()
                    .statusCode(200)
                    .body("checks.find { it.name == 'warm-up' }.data.detail", warmedUp()));
    answersReviewWithExpectedResponse("pod-topology-worker");
    var metrics =
        given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/metrics").then().statusCode(200).extract().asString();
    assertThat(metrics)
        .contains("gpu_admission_requests_total{endpoint=\"mutate\",outcome=\"patched\"}")
        .contains("gpu_admission_rule_hits_total{endpoint=\"mutate\",rule=\"topology-job\"}")
        .contains("gpu_admission_request_duration_seconds_bucket{endpoint=\"mutate\"");
  }

  private static JsonNode tree(byte[] body) {
    try {
      return KubernetesJson.mapper().readTree(body);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
