package io.gpuadmission.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.cluster.GpuNode;
import io.gpuadmission.cluster.InformerClusterView;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.testing.LogCapture;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusMock;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.net.URL;
import java.util.List;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * A pod the rules cannot judge costs one WARN line per endpoint with its uid and reason, not a
 * stack trace; the API server sending the same uid again (reinvocation, retry) adds nothing.
 */
@QuarkusTest
class UnjudgedLogTest {
  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Test
  void logsOneWarnLineWithUidAndReasonAndNoTracePerUnjudgeablePod() {
    // A uid of its own: other tests in this application send the same fixture, already logged.
    var uid = "unjudged-" + System.nanoTime();
    // Warm-up's own sample reviews go through /validate too: done before the view below fails, or
    // they would be logged beside this test's one.
    io.gpuadmission.support.WebhookCalls.awaitReady(base);
    // Every object the rules cannot read is refused as malformed before they run (MalformedPod, field
    // types, quantities), so what is left unjudgeable is a failure beside the object: here the
    // cluster's node cache failing while a GPU workload is judged. /validate judges workloads,
    // /mutate leaves them alone.
    QuarkusMock.installMockForType(new InformerClusterView(null, null, null) {
      @Override
      public List<GpuNode> nodes() {
        throw new IllegalStateException("node cache unavailable");
      }
    }, InformerClusterView.class);
    var review = Fixtures.text(Fixtures.path("reviews/deployment-gpu-cuda.json")).replace("0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d50", uid);
    try (var log = LogCapture.of("io.gpuadmission.admission.UnjudgedLog", false)) {
      for (var path : new String[] {"/validate", "/validate"}) {
        given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON)
            .body(review).post(path)
            .then().statusCode(200);
      }

      assertThat(log.records()).hasSize(1).allSatisfy(record -> {
        assertThat(record.getLevel()).isEqualTo(org.jboss.logmanager.Level.WARN);
        assertThat(record.getThrown()).isNull();
      });
      var reason = "IllegalStateException: node cache unavailable";
      assertThat(log.records()).extracting(LogCapture::text).satisfiesExactly(
          validate -> assertThat(validate).startsWith(
              "validate: could not judge Deployment default/broken-gpu-deployment (uid " + uid + "): " + reason));
      assertThat(log.records()).noneMatch(r -> r.getLevel().intValue() >= Level.SEVERE.intValue());
    }
  }
}
