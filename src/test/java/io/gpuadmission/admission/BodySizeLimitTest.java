package io.gpuadmission.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import jakarta.inject.Inject;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * kube-apiserver never sends more than 3 MiB: a larger body is refused with 413 and a Status
 * saying why, and the connection is then closed (the server speaks HTTP/1.1 only).
 */
@QuarkusTest
class BodySizeLimitTest {
  private static final int LIMIT = 3 * 1024 * 1024;

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

  /** A real review padded with an annotation to exactly {@code size} bytes. */
  private static byte[] reviewOfSize(int size) {
    var review = (ObjectNode) Fixtures.jsonTree(Fixtures.path("reviews/pod-topology-worker.json"));
    var annotations = ((ObjectNode) review.at("/request/object/metadata")).putObject("annotations");
    annotations.put("padding", "");
    var overhead = review.toString().getBytes(StandardCharsets.UTF_8).length;
    annotations.put("padding", "x".repeat(size - overhead));
    var body = review.toString().getBytes(StandardCharsets.UTF_8);
    assertThat(body).hasSize(size);
    return body;
  }

  private HttpResponse<String> post(HttpClient.Version version, byte[] body) throws Exception {
    var tls = SSLContext.getInstance("TLS");
    tls.init(null, new TrustManager[] {io.gpuadmission.support.TrustAnything.manager()}, new SecureRandom());
    var client = HttpClient.newBuilder().version(version).sslContext(tls).connectTimeout(Duration.ofSeconds(5)).build();
    var request = HttpRequest.newBuilder(URI.create(base + "mutate")).timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
    return client.send(request, HttpResponse.BodyHandlers.ofString());
  }

  @ParameterizedTest
  @EnumSource(HttpClient.Version.class)
  void answersBodyOfExactlyThreeMebibytes(HttpClient.Version version) throws Exception {
    var response = post(version, reviewOfSize(LIMIT));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).contains("\"uid\":\"3f0b7d5e-1c2a-4b8e-9d6f-0a1b2c3d4e5f\"");
  }

  /**
   * Declares one byte over the limit but sends only the first 64 KiB and then waits: the answer
   * comes anyway, so the server did not wait to read the rest.
   */
  @org.junit.jupiter.api.Test
  void refusesLargerBodyWith413AndReasonWithoutReadingIt() throws Exception {
    var version = HttpVersion.HTTP_1_1;
    var client = vertx.createHttpClient(new HttpClientOptions().setSsl(true).setTrustAll(true).setVerifyHost(false)
        .setUseAlpn(true).setProtocolVersion(version).setDefaultHost(base.getHost()).setDefaultPort(base.getPort()));
    try {
      var body = reviewOfSize(LIMIT + 1);
      var answer = client.request(HttpMethod.POST, "/mutate")
          .compose(request -> {
            request.putHeader("content-type", "application/json").putHeader("content-length", String.valueOf(body.length));
            request.write(Buffer.buffer(java.util.Arrays.copyOf(body, 64 * 1024)));
            return request.response();
          })
          .compose(response -> response.body().map(text -> response.statusCode() + " " + response.version()
              + " " + response.getHeader("content-type") + " " + text))
          .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

      assertThat(answer).isEqualTo("413 " + version + " application/json "
          + "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"code\":413,\"message\":\"request body of 3145729 bytes is"
          + " larger than the 3145728-byte limit; kube-apiserver never sends an AdmissionReview over 3 MiB\","
          + "\"reason\":\"RequestEntityTooLarge\",\"status\":\"Failure\"}");
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
  }

  /** The extender's paths are held to the same limit; the reason names kube-scheduler's request. */
  @org.junit.jupiter.api.Test
  void refusesLargerExtenderBodyNamingTheScheduler() throws Exception {
    var client = vertx.createHttpClient(new HttpClientOptions().setSsl(true).setTrustAll(true).setVerifyHost(false)
        .setUseAlpn(true).setProtocolVersion(HttpVersion.HTTP_1_1).setDefaultHost(base.getHost()).setDefaultPort(base.getPort()));
    try {
      var answer = client.request(HttpMethod.POST, "/extender/filter")
          .compose(request -> {
            request.putHeader("content-type", "application/json").putHeader("content-length", String.valueOf(LIMIT + 1));
            request.write(Buffer.buffer(new byte[64 * 1024]));
            return request.response();
          })
          .compose(response -> response.body().map(text -> response.statusCode() + " " + text))
          .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

      assertThat(answer).isEqualTo("413 "
          + "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"code\":413,\"message\":\"request body of 3145729 bytes is"
          + " larger than the 3145728-byte limit; kube-scheduler never sends an extender request over 3 MiB\","
          + "\"reason\":\"RequestEntityTooLarge\",\"status\":\"Failure\"}");
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
  }
}
