package io.gpuadmission.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The review paths as HTTP: only POST is served; a client's Expect: 100-continue is honoured. */
@QuarkusTest
class AdmissionHttpTest {
  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject Vertx vertx;

  /**
   * The requests below give up after seconds: they start once warm-up is done, not on a cold JVM
   * (whose first review takes seconds even on a quiet machine) that a busy machine slows further.
   */
  @BeforeEach
  void warmedUp() {
    io.gpuadmission.support.WebhookCalls.awaitReady(base);
  }

  @Test
  void otherMethodsGet405() {
    for (var method : java.util.List.of("GET", "PUT", "DELETE", "PATCH")) {
      assertThat(given().relaxedHTTPSValidation().baseUri(base.toString()).request(method, "/validate").statusCode())
          .as(method).isEqualTo(405);
    }
  }

  /** A client that sends {@code Expect: 100-continue} gets the go-ahead, then its answer. */
  @ParameterizedTest
  @EnumSource(value = HttpVersion.class, names = {"HTTP_1_1", "HTTP_2"})
  void answersExpectContinue(HttpVersion version) throws Exception {
    var body = Files.readAllBytes(Fixtures.path("reviews/pod-topology-worker.json"));
    var client = vertx.createHttpClient(new HttpClientOptions().setSsl(true).setTrustAll(true).setVerifyHost(false)
        .setUseAlpn(true).setProtocolVersion(version).setDefaultHost(base.getHost()).setDefaultPort(base.getPort()));
    try {
      var answer = client.request(HttpMethod.POST, "/mutate")
          .compose(request -> {
            request.putHeader("content-type", "application/json").putHeader("expect", "100-continue")
                .putHeader("content-length", String.valueOf(body.length));
            // The body goes only once the server said 100 Continue.
            request.continueHandler(go -> request.end(Buffer.buffer(body)));
            request.sendHead();
            return request.response();
          })
          .compose(response -> response.body().map(text -> response.statusCode() + " " + text.toString().contains(
              "\"uid\":\"3f0b7d5e-1c2a-4b8e-9d6f-0a1b2c3d4e5f\"")))
          .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

      assertThat(answer).isEqualTo("200 true");
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
  }
}
