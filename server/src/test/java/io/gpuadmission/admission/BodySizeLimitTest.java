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

  /** Sends the head of a request declaring {@code declared} bytes (and 64 KiB of it), and answers "status body". */
  private String declareAndAnswer(String path, long declared) throws Exception {
    var client = vertx.createHttpClient(new HttpClientOptions().setSsl(true).setTrustAll(true).setVerifyHost(false)
        .setUseAlpn(true).setProtocolVersion(HttpVersion.HTTP_1_1).setDefaultHost(base.getHost()).setDefaultPort(base.getPort()));
    try {
      return client.request(HttpMethod.POST, path)
          .compose(request -> {
            request.putHeader("content-type", "application/json").putHeader("content-length", String.valueOf(declared));
            request.write(Buffer.buffer(new byte[64 * 1024]));
            return request.response();
          })
          .compose(response -> response.body().map(text -> response.statusCode() + " " + text))
          .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
  }

  private static final String TOO_LARGE_FOR_THE_EXTENDER =
      "request body of 134217729 bytes is larger than the extender's 134217728-byte limit"
          + " (gpu-admission.extender.max-body-size): with nodeCacheCapable: false kube-scheduler sends every feasible Node"
          + " whole; set nodeCacheCapable: true in its extender configuration (it then sends node names only), or raise the"
          + " limit together with the Deployment's memory limit";

  /**
   * kube-scheduler puts no cap on its requests: the extender's paths have their own, larger limit
   * (128 MiB), and a body over it is answered in the verb's own result with Error set, which
   * kube-scheduler logs and reports on the pod, and counted.
   */
  @org.junit.jupiter.api.Test
  void refusesExtenderBodyOverItsOwnLimitInTheVerbsAnswerAndCountsIt() throws Exception {
    var before = tooLarge("filter");

    assertThat(declareAndAnswer("/extender/filter", 128L * 1024 * 1024 + 1)).isEqualTo("200 "
        + "{\"Nodes\":null,\"NodeNames\":null,\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},\"Error\":\""
        + TOO_LARGE_FOR_THE_EXTENDER + "\"}");
    assertThat(declareAndAnswer("/gpushare-scheduler/bind", 128L * 1024 * 1024 + 1)).isEqualTo("200 {\"Error\":\"" + TOO_LARGE_FOR_THE_EXTENDER + "\"}");
    // HostPriorityList has no Error field: kube-scheduler logs the status code.
    assertThat(declareAndAnswer("/extender/prioritize", 128L * 1024 * 1024 + 1)).isEqualTo("413 {\"Error\":\"" + TOO_LARGE_FOR_THE_EXTENDER + "\"}");
    assertThat(tooLarge("filter")).isEqualTo(before + 1);
  }

  /** An extender body over 3 MiB (kube-apiserver's cap, not kube-scheduler's) is read and judged. */
  @org.junit.jupiter.api.Test
  void readsExtenderBodyOverThreeMebibytes() throws Exception {
    // Not JSON: judged (400 with a reason), so it was read, not refused for its size.
    var answer = io.gpuadmission.support.SchedulerCaller.given().baseUri(base.toString()).contentType("application/json")
        .body(new byte[LIMIT + 1]).post("/extender/filter");

    assertThat(answer.statusCode()).isEqualTo(400);
    assertThat(answer.jsonPath().getString("Error")).isNotBlank();
  }

  /**
   * A chunked body (no Content-Length) is counted as it comes: over 3 MiB on an admission path it
   * gets the same Status as a declared one; within it, it is answered.
   */
  @org.junit.jupiter.api.Test
  void refusesChunkedReviewOverThreeMebibytesWithTheStatusAndAnswersASmallerOne() throws Exception {
    assertThat(chunked("/mutate", reviewOfSize(LIMIT + 1))).isEqualTo("413 "
        + "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"code\":413,\"message\":\"chunked request body of 3145729 bytes is"
        + " larger than the 3145728-byte limit; kube-apiserver never sends an AdmissionReview over 3 MiB\","
        + "\"reason\":\"RequestEntityTooLarge\",\"status\":\"Failure\"}");
    assertThat(chunked("/mutate", reviewOfSize(LIMIT))).startsWith("200 ").contains("\"uid\":\"3f0b7d5e-1c2a-4b8e-9d6f-0a1b2c3d4e5f\"");
  }

  /**
   * A chunked extender body is counted as it comes: over the extender's limit it gets the verb's
   * own answer and is counted as too_large, as a declared one is (not the HTTP server's bare 413);
   * within it, the endpoint reads it.
   */
  @org.junit.jupiter.api.Test
  void refusesChunkedExtenderBodyOverItsLimitInTheVerbsAnswerAndReadsASmallerOne() throws Exception {
    var before = tooLarge("filter");
    var chunkedTooLarge = TOO_LARGE_FOR_THE_EXTENDER.replace("request body of 134217729 bytes", "chunked request body of more than 134217728 bytes");

    assertThat(chunked("/extender/filter", new byte[128 * 1024 * 1024 + 1])).isEqualTo("200 "
        + "{\"Nodes\":null,\"NodeNames\":null,\"FailedNodes\":{},\"FailedAndUnresolvableNodes\":{},\"Error\":\"" + chunkedTooLarge + "\"}");
    assertThat(tooLarge("filter")).isEqualTo(before + 1);
    assertThat(chunked("/extender/filter", "{\"Pod\":{\"metadata\":{\"name\":\"p\"}}}".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("400 {\"Error\":\"ExtenderArgs without NodeNames or Nodes\"}");
  }

  /** Posts {@code body} chunked (no Content-Length) and answers "status body". */
  private String chunked(String path, byte[] body) throws Exception {
    // With kube-scheduler's certificate, which the extender's endpoints ask for (the admission ones do not).
    var client = vertx.createHttpClient(new HttpClientOptions().setSsl(true).setTrustAll(true).setVerifyHost(false)
        .setKeyCertOptions(new io.vertx.core.net.PemKeyCertOptions().setCertPath(io.gpuadmission.support.SchedulerCaller.CERT.toString())
            .setKeyPath(io.gpuadmission.support.SchedulerCaller.KEY.toString()))
        .setUseAlpn(true).setProtocolVersion(HttpVersion.HTTP_1_1).setDefaultHost(base.getHost()).setDefaultPort(base.getPort()));
    try {
      return client.request(HttpMethod.POST, path)
          .compose(request -> {
            request.putHeader("content-type", "application/json").setChunked(true);
            for (int at = 0; at < body.length; at += 256 * 1024) {
              request.write(Buffer.buffer(java.util.Arrays.copyOfRange(body, at, Math.min(body.length, at + 256 * 1024))));
            }
            request.end();
            return request.response();
          })
          .compose(response -> response.body().map(text -> response.statusCode() + " " + text))
          .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
  }

  /** gpu_admission_extender_requests_total for {@code verb} and outcome too_large (0 before the first). */
  private double tooLarge(String verb) {
    var metrics = io.gpuadmission.support.WebhookCalls.metrics(base);
    var line = java.util.regex.Pattern.compile(
        "(?m)^gpu_admission_extender_requests_total\\{outcome=\"too_large\",verb=\"" + verb + "\"\\} (\\S+)$").matcher(metrics);
    return line.find() ? Double.parseDouble(line.group(1)) : 0;
  }
}
