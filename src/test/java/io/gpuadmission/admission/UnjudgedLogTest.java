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
    var review = Fixtures.text(Fixtures.path("reviews/pod-gpu-unjudgeable.json")).replace("0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e", uid);
    try (var log = LogCapture.of("io.gpuadmission.admission.UnjudgedLog", false)) {
      for (var path : new String[] {"/mutate", "/mutate", "/validate", "/validate"}) {
        given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON)
            .body(review).post(path)
            .then().statusCode(200);
      }

      assertThat(log.records()).hasSize(2).allSatisfy(record -> {
        assertThat(record.getLevel()).isEqualTo(org.jboss.logmanager.Level.WARN);
        assertThat(record.getThrown()).isNull();
      });
      var reason = "IllegalArgumentException: Cannot deserialize value of type `java.lang.Boolean` from String \"maybe\":"
          + " only \"true\" or \"false\" recognized (at io.gpuadmission.admission.ReviewObject.as:";
      assertThat(log.records()).extracting(LogCapture::text).satisfiesExactly(
          mutate -> assertThat(mutate).startsWith(
              "mutate: could not judge pod default/broken-gpu-pod (uid " + uid + "): " + reason),
          validate -> assertThat(validate).startsWith(
              "validate: could not judge Pod default/broken-gpu-pod (uid " + uid + "): " + reason));
      assertThat(log.records()).noneMatch(r -> r.getLevel().intValue() >= Level.SEVERE.intValue());
    }
  }
}
