package io.gpuadmission.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.support.Fixtures;
import io.gpuadmission.testing.LogCapture;
import io.gpuadmission.support.TrustAnything;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
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

  /** HTTP/1.1 only, and said so in the handshake: a client offering h2 first is told http/1.1. */
  @Test
  void alpnSelectsHttp11() throws Exception {
    try (var socket = tlsSocket()) {
      var parameters = socket.getSSLParameters();
      parameters.setApplicationProtocols(new String[] {"h2", "http/1.1"});
      socket.setSSLParameters(parameters);
      socket.startHandshake();

      assertThat(socket.getApplicationProtocol()).isEqualTo("http/1.1");
    }
  }

  /**
   * A client speaking HTTP/2 with prior knowledge (no ALPN, straight to the preface) gets a 505
   * with a Status saying why and the connection closed; nothing is logged at ERROR.
   */
  @Test
  void http2WithPriorKnowledgeIsRefusedWithoutAnErrorLog() throws Exception {
    try (var logs = LogCapture.of("", false); var socket = tlsSocket()) {
      socket.setSoTimeout(10_000);
      socket.startHandshake();
      var out = socket.getOutputStream();
      out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0}); // an empty SETTINGS frame, as every HTTP/2 client sends
      out.flush();
      var answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);

      if (!requestsReachTheRouter()) {
        // Vert.x core's own answer, before any code of ours: no body, nothing logged either.
        assertThat(answer).isEqualTo("HTTP/2.0 501 Not Implemented\r\ncontent-length: 0\r\n\r\n");
        assertThat(errors(logs)).isEmpty();
        return;
      }
      assertThat(answer.lines().findFirst()).contains("HTTP/2.0 505 HTTP Version Not Supported");
      assertThat(answer.substring(answer.indexOf("\r\n\r\n") + 4))
          .isEqualTo("{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"code\":505,\"message\":\"this server speaks HTTP/1.1 only (ALPN http/1.1),"
              + " not HTTP/2 with prior knowledge; see docs/operations.md#failover\",\"reason\":\"HTTPVersionNotSupported\","
              + "\"status\":\"Failure\"}");
      assertThat(errors(logs)).isEmpty();
    }
  }

  /** An HTTP/1.1 request without a Host header: 400 with a Status, nothing logged at ERROR. */
  @Test
  void aRequestWithoutHostIsABadRequestWithoutAnErrorLog() throws Exception {
    try (var logs = LogCapture.of("", false); var socket = tlsSocket()) {
      socket.setSoTimeout(10_000);
      var out = socket.getOutputStream();
      out.write("POST /mutate HTTP/1.1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      var answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);

      assertThat(answer.lines().findFirst()).contains("HTTP/1.1 400 Bad Request");
      assertThat(answer.substring(answer.indexOf("\r\n\r\n") + 4))
          .isEqualTo("{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"code\":400,\"message\":\"an HTTP/1.1 request needs a Host header\","
              + "\"reason\":\"BadRequest\",\"status\":\"Failure\"}");
      assertThat(errors(logs)).isEmpty();
    }
  }

  /**
   * Whether Vert.x hands every HTTP/1 request to the router, as in the app: Quarkus turns Vert.x'
   * WebSocket handling off (vertx.disableWebsockets) before Vert.x' server class loads. In a test
   * JVM where a fabric8 mock server (Vert.x) loaded that class first, Vert.x core answers a request
   * of an unknown HTTP version itself.
   */
  private static boolean requestsReachTheRouter() throws Exception {
    var disabled = Class.forName("io.vertx.core.http.impl.HttpServerImpl").getDeclaredField("DISABLE_WEBSOCKETS");
    disabled.setAccessible(true);
    return disabled.getBoolean(null);
  }

  private SSLSocket tlsSocket() throws Exception {
    return (SSLSocket) TrustAnything.context().getSocketFactory().createSocket(base.getHost(), base.getPort());
  }

  /** ERROR records of the HTTP layers (Quarkus, Vert.x, Netty), as the console would print them. */
  private static java.util.List<String> errors(LogCapture logs) {
    return logs.records().stream()
        .filter(r -> r.getLevel().intValue() >= java.util.logging.Level.SEVERE.intValue())
        .filter(r -> r.getLoggerName() != null && r.getLoggerName().matches("io\\.(quarkus|vertx|netty)\\..*"))
        .map(LogCapture::text)
        .toList();
  }
}
