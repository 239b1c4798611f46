package io.gpuadmission.support;

import static io.restassured.RestAssured.given;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.admission.KubernetesJson;
import io.restassured.http.ContentType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;

/** Posts an AdmissionReview over HTTPS as kube-apiserver does and reads the answer. */
public final class WebhookCalls {
  private WebhookCalls() {}

  /** The answer to {@code review} at {@code path}, which must come with HTTP 200. */
  public static JsonNode post(URL base, String path, String review) {
    var body =
        given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON).body(review)
            .post(path).then().statusCode(200).extract().asByteArray();
    try {
      return KubernetesJson.mapper().readTree(body);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits until readiness is UP: warm-up done (a cold JVM on a busy machine needs seconds). */
  public static void awaitReady(URL base) {
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(90))
        .until(() -> given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/health/ready").statusCode() == 200);
  }

  /** The text of /q/metrics. */
  public static String metrics(URL base) {
    return given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/metrics").then().statusCode(200).extract().asString();
  }
}
