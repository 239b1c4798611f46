package io.gpuadmission.fuzz;

import io.gpuadmission.support.SchedulerCaller;
import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.cluster.ClusterFixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import jakarta.inject.Inject;
import java.io.IOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Property: whatever the body and content type, every extender endpoint (filter, prioritize,
 * preempt, bind under /extender and /gpushare-scheduler) answers over HTTPS with a well-formed result or a 400
 * with a reason (over the extender's limit, an Error); never a 5xx, never a hang. The app watches the
 * fixture cluster, so filter and prioritize judge real nodes, and binds reach the API server.
 * {@code -Dfuzz.extender-tries=N} sets the volume (the nightly profile raises it), {@code
 * -Dfuzz.seed=S} replays a run.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class ExtenderFuzzTest {
  private static final long SEED = Long.getLong("fuzz.seed", System.nanoTime());
  private static final int TRIES = Integer.getInteger("fuzz.extender-tries", 3_000);
  /** Far beyond any honest answer: only a hang takes this long. */
  private static final Duration HANG = Duration.ofSeconds(10);
  private static final List<String> CONTENT_TYPES =
      List.of("application/json", "application/json; charset=utf-8", "text/plain", "application/xml",
          "application/x-www-form-urlencoded", "application/octet-stream", "multipart/form-data; boundary=x");

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject Vertx vertx;

  @Test
  @Timeout(value = 60, unit = TimeUnit.MINUTES)
  void everyExtenderBodyGetsAWellFormedAnswerOrAReason() throws Exception {
    var corpus = ExtenderCorpus.load();
    var fuzzer = new JsonFuzzer(SEED);
    var client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(SchedulerCaller.context())
        .connectTimeout(HANG).build();
    var failures = new TreeMap<String, String>();
    var outcomes = new TreeMap<String, Integer>();
    for (int i = 0; i < TRIES; i++) {
      var fuzzCase = ExtenderFuzzCase.next(fuzzer, corpus, i);
      var prefix = (i / 3) % 2 == 0 ? "extender/" : "gpushare-scheduler/";
      var contentType = CONTENT_TYPES.get(fuzzer.random().nextInt(CONTENT_TYPES.size()));
      var request = HttpRequest.newBuilder(URI.create(base + prefix + fuzzCase.verb())).timeout(HANG)
          .header("Content-Type", contentType).POST(HttpRequest.BodyPublishers.ofByteArray(fuzzCase.body())).build();
      try {
        var response = send(client, request);
        var outcome = ExtenderAnswerCheck.check(fuzzCase.verb(), fuzzCase.body(), response.statusCode(), response.body());
        outcomes.merge(fuzzCase.verb() + " " + outcome, 1, Integer::sum);
      } catch (AssertionError | IOException e) {
        failures.putIfAbsent(fuzzCase.verb() + " " + firstLine(e), "case " + i + " (" + fuzzCase.how() + ", " + contentType + "): "
            + e + "\n  body: " + fuzzCase.excerpt());
      }
    }
    System.out.printf("extender fuzz seed %d: %d cases, outcomes %s%n", SEED, TRIES, outcomes);
    assertThat(failures).as("contract broken (replay with -Dfuzz.seed=%d)", SEED).isEmpty();
    assertThat(outcomes.keySet()).as("the generator reaches every kind of answer")
        .contains("filter 400", "filter 200 filter", "prioritize 400", "prioritize 200 prioritize", "bind 400", "bind 200 bind error",
            "preempt 400", "preempt 200 preempt");
  }

  /**
   * Over the extender's limit, the answer comes before the body is read: declared 128 MiB + 1 byte,
   * only the head sent, then the verb's answer with its Error (filter, bind) or a 413 with one. (Body bytes the server never reads would make its close
   * a TCP reset, which can overtake the answer on the client's side: a race, not a finding. A
   * client that insists on sending all of it first never sees the answer either, so the fuzzer
   * itself stays under the limit.)
   */
  @Test
  void bodiesOverTheLimitGetAnErrorOnEveryExtenderPath() throws Exception {
    // A connection per request: the server closes each one after its answer.
    var client = vertx.createHttpClient(new HttpClientOptions().setSsl(true).setTrustAll(true).setVerifyHost(false).setKeyCertOptions(SchedulerCaller.vertxKeyCert())
        .setKeepAlive(false).setDefaultHost(base.getHost()).setDefaultPort(base.getPort()));
    try {
      for (var path : List.of("/extender/filter", "/extender/prioritize", "/extender/bind", "/gpushare-scheduler/filter",
          "/gpushare-scheduler/prioritize", "/gpushare-scheduler/bind")) {
        var declared = ExtenderAnswerCheck.EXTENDER_BODY_LIMIT + 1;
        var answer = client.request(HttpMethod.POST, path)
            .compose(request -> {
              request.putHeader("content-type", "application/json").putHeader("content-length", String.valueOf(declared));
              request.sendHead();
              return request.response();
            })
            .compose(response -> response.body().map(body -> response.statusCode() + " " + body))
            .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(answer).as(path).startsWith(path.endsWith("prioritize") ? "413 {" : "200 {")
            .contains("\"Error\":\"request body of 134217729 bytes is larger than the extender's 134217728-byte limit");
      }
    } finally {
      client.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
  }

  /** The answer, or an AssertionError when none came in time. */
  private static HttpResponse<byte[]> send(HttpClient client, HttpRequest request) throws IOException, InterruptedException {
    try {
      return client.send(request, HttpResponse.BodyHandlers.ofByteArray());
    } catch (HttpTimeoutException e) {
      throw new AssertionError("no answer within " + HANG.toSeconds() + " s", e);
    }
  }

  private static String firstLine(Throwable e) {
    var message = String.valueOf(e.getMessage());
    var line = message.lines().findFirst().orElse("");
    return e.getClass().getSimpleName() + ": " + (line.length() > 80 ? line.substring(0, 80) : line);
  }
}
