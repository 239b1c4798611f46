package io.gpuadmission.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.LogCapture;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.net.URL;
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
    // A workload whose template the rules cannot read (a quantity that is no number): /validate judges
    // workloads, /mutate leaves them alone.
    var review = Fixtures.text(Fixtures.path("reviews/deployment-gpu-unjudgeable.json")).replace("0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d50", uid);
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
      var reason = "NumberFormatException: Character l is neither a decimal digit number";
      assertThat(log.records()).extracting(LogCapture::text).satisfiesExactly(
          validate -> assertThat(validate).startsWith(
              "validate: could not judge Deployment default/broken-gpu-deployment (uid " + uid + "): " + reason));
      assertThat(log.records()).noneMatch(r -> r.getLevel().intValue() >= Level.SEVERE.intValue());
    }
  }
}
