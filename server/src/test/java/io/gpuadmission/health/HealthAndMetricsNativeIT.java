package io.gpuadmission.health;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.TrustAnything;
import io.gpuadmission.support.WebhookCalls;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import java.io.IOException;
import java.net.URL;
import java.util.HashMap;
import java.util.Map;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged server's health, metrics and TLS (the native executable in the native build, whose
 * HTTPS is the JDK's engine, not BoringSSL), watching the mock API server: the probes the
 * Deployment asks, every readiness check with its data, the review counters after a review, and
 * the handshake kube-apiserver makes (TLS 1.3, ALPN http/1.1).
 */
@QuarkusIntegrationTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class HealthAndMetricsNativeIT {
  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @BeforeEach
  void ready() {
    WebhookCalls.awaitReady(base);
  }

  @Test
  void answersTheProbesWithEveryReadinessCheckUp() {
    assertThat(status("/q/health/started")).isEqualTo(200);
    assertThat(status("/q/health/live")).isEqualTo(200);

    var checks = checks(given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/ready").then().statusCode(200).extract().asString());

    assertThat(checks.keySet()).containsExactlyInAnyOrder("warm-up", "cluster", "policy", "certificate", "heap", "quota-tree");
    checks.forEach((name, check) -> assertThat(check.path("status").asText()).as(name + ": " + check).isEqualTo("UP"));
    assertThat(checks.get("warm-up").path("data").path("detail").asText()).matches("HTTPS self-request on port \\d+ done");
    var heap = checks.get("heap").path("data");
    assertThat(heap.path("short").asBoolean()).isFalse();
    assertThat(heap.path("heapMaxMiB").asLong()).as(heap.toString()).isPositive();
    assertThat(heap.path("oldGenerationMaxMiB").asLong()).as(heap.toString()).isPositive();
    // Placement is a wellness check, which no probe reads (PlacementHealthCheck says why).
    var well = checks(given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/well").then().extract().asString());
    assertThat(well.keySet()).contains("placement");
  }

  @Test
  void countsAReviewInTheMetrics() {
    WebhookCalls.post(base, "/mutate", Fixtures.text(Fixtures.path("reviews/pod-topology-worker.json")));

    assertThat(WebhookCalls.metrics(base))
        .contains("gpu_admission_requests_total{endpoint=\"mutate\",outcome=\"patched\"}")
        .contains("gpu_admission_rule_hits_total{endpoint=\"mutate\",rule=\"topology-job\"}")
        .contains("gpu_admission_request_duration_seconds_bucket{endpoint=\"mutate\"")
        .contains("gpu_admission_heap_live_ratio");
  }

  @Test
  void negotiatesTls13AndHttp11AsKubeApiserverAsks() throws Exception {
    try (var socket = (SSLSocket) TrustAnything.context().getSocketFactory().createSocket(base.getHost(), base.getPort())) {
      var parameters = socket.getSSLParameters();
      parameters.setApplicationProtocols(new String[] {"h2", "http/1.1"});
      socket.setSSLParameters(parameters);
      socket.startHandshake();

      assertThat(socket.getSession().getProtocol()).isEqualTo("TLSv1.3");
      assertThat(socket.getApplicationProtocol()).isEqualTo("http/1.1");
    }
  }

  private int status(String path) {
    return given().relaxedHTTPSValidation().baseUri(base.toString()).get(path).statusCode();
  }

  private static Map<String, JsonNode> checks(String body) {
    try {
      var checks = new HashMap<String, JsonNode>();
      KubernetesJson.mapper().readTree(body).path("checks").forEach(check -> checks.put(check.path("name").asText(), check));
      return checks;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
