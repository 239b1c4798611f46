package io.gpuadmission.node.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.node.api.ScriptedApiServer.Answer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The agent's reflector against a scripted API server: what it asks, in which order, and what it hands on. */
class ListWatchTest {
  static final Duration WITHIN = Duration.ofSeconds(10);

  ScriptedApiServer server;
  ApiServer api;
  ListWatch watch;
  /** What the handler got: "listed a,b", "added c", "modified c", "deleted c". */
  final List<String> seen = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    if (watch != null) {
      watch.close();
    }
    if (api != null) {
      api.close();
    }
    if (server != null) {
      server.close();
    }
  }

  static String list(String version, String... names) {
    var items = new StringBuilder();
    for (var name : names) {
      items.append(items.isEmpty() ? "" : ",").append(pod(name, version));
    }
    return "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" + version + "\"},\"items\":[" + items + "]}";
  }

  static String pod(String name, String version) {
    return "{\"metadata\":{\"name\":\"" + name + "\",\"namespace\":\"default\",\"resourceVersion\":\"" + version + "\"}}";
  }

  static String event(String type, String name, String version) {
    return "{\"type\":\"" + type + "\",\"object\":" + pod(name, version) + "}";
  }

  static String bookmark(String version) {
    return "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" + version + "\"}}}";
  }

  void start() {
    start(Duration.ofSeconds(5));
  }

  void start(Duration requestTimeout) {
    api = ApiServer.at(server.url(), Path.of("no-service-account"), false, requestTimeout);
    watch = new ListWatch(api, "/api/v1/pods", "fieldSelector=" + ApiServer.encode("spec.nodeName=gpu-1"), "pods of node gpu-1",
        handler(), Duration.ofMillis(50)).start();
  }

  ListWatch.Handler handler() {
    return new ListWatch.Handler() {
          @Override
          public void listed(List<JsonNode> items) {
            seen.add("listed " + String.join(",", items.stream().map(i -> i.path("metadata").path("name").asText()).toList()));
          }

          @Override
          public void added(JsonNode object) {
            seen.add("added " + object.path("metadata").path("name").asText());
          }

          @Override
          public void modified(JsonNode object) {
            seen.add("modified " + object.path("metadata").path("name").asText());
          }

          @Override
          public void deleted(JsonNode object) {
            seen.add("deleted " + object.path("metadata").path("name").asText());
          }
        };
  }

  List<String> watchedFrom() {
    return server.watchRequests().stream().map(r -> r.param("resourceVersion")).toList();
  }

  @Test
  void aWatchTheServerAcceptsAfterAnOutageSaysItAnswersAgainBeforeAnyEvent() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10", "a")));
    server.watches.add(Answer.status(503, "the server is currently unable to handle the request"));
    server.watches.add(Answer.lines().heldOpen());

    try (var log = io.gpuadmission.testing.LogCapture.of(ListWatch.class, true)) {
      start();

      // The second watch is open and silent: no event, yet the outage is over.
      await().atMost(WITHIN).until(() -> log.records().size() == 2);
      assertThat(log.records()).extracting(io.gpuadmission.testing.LogCapture::text).containsExactly(
          "pods of node gpu-1: the server is currently unable to handle the request (HTTP 503); trying again, first in 50 ms",
          "pods of node gpu-1: the API server answers again");
      assertThat(server.watchRequests()).hasSize(2);
      assertThat(seen).containsExactly("listed a");
    }
  }

  @Test
  void listsWithItsSelectorThenWatchesFromTheListsVersionWithBookmarks() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10", "a", "b")));
    server.watches.add(Answer.lines(event("ADDED", "c", "11"), event("MODIFIED", "c", "12"), event("DELETED", "a", "13")));

    start();

    await().atMost(WITHIN).until(() -> server.watchRequests().size() == 2);
    assertThat(seen).containsExactly("listed a,b", "added c", "modified c", "deleted a");
    var list = server.listRequests().getFirst();
    assertThat(list.target()).isEqualTo("/api/v1/pods?fieldSelector=spec.nodeName%3Dgpu-1&limit=500");
    var first = server.watchRequests().getFirst();
    assertThat(first.target()).startsWith("/api/v1/pods?fieldSelector=spec.nodeName%3Dgpu-1&watch=true&allowWatchBookmarks=true&timeoutSeconds=")
        .endsWith("&resourceVersion=10");
    assertThat(Integer.parseInt(first.param("timeoutSeconds"))).isBetween(300, 599);
    // The server ended the first watch (its timeout): the next resumes after the last event, without a list.
    assertThat(watchedFrom()).containsExactly("10", "13");
    assertThat(server.listRequests()).hasSize(1);
    assertThat(watch.synced()).isTrue();
  }

  @Test
  void aWatchOutlivesTheRequestTimeoutOnceItsHeadersCame() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10", "a")));

    start(Duration.ofMillis(300));

    await().atMost(WITHIN).until(() -> server.watchRequests().size() == 1);
    // Five times the timeout without a second watch: the first is still open.
    await().during(Duration.ofMillis(1500)).atMost(WITHIN).until(() -> server.watchRequests().size() == 1);
    assertThat(seen).containsExactly("listed a");
  }

  @Test
  void aWatchTheServerDoesNotEndInTimeIsEndedByTheAgentAndMadeAgain() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10", "a")));
    server.watches.add(Answer.lines(event("ADDED", "b", "11")).heldOpen());

    api = ApiServer.at(server.url(), Path.of("no-service-account"), false, Duration.ofSeconds(5));
    watch = new ListWatch(api, "/api/v1/pods", "", "pods", handler(), Duration.ofMillis(50))
        .watchLength(Duration.ofSeconds(1), Duration.ofMillis(500)).start();

    // Held open past its timeoutSeconds (1 or 2) and the grace: given up, then resumed after b.
    await().atMost(WITHIN).until(() -> server.watchRequests().size() == 2);
    assertThat(Integer.parseInt(server.watchRequests().getFirst().param("timeoutSeconds"))).isBetween(1, 2);
    assertThat(watchedFrom()).containsExactly("10", "11");
    assertThat(seen).containsExactly("listed a", "added b");
    assertThat(server.listRequests()).hasSize(1);
  }

  @Test
  void aBookmarkMovesTheVersionOnWithoutAnyChange() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10", "a")));
    server.watches.add(Answer.lines(bookmark("57")));

    start();

    await().atMost(WITHIN).until(() -> server.watchRequests().size() == 2);
    assertThat(watchedFrom()).containsExactly("10", "57");
    assertThat(seen).containsExactly("listed a");
  }

  @Test
  void aGoneVersionListsAgainWhetherRefusedAtOnceOrInTheStream() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10", "a")));
    server.watches.add(Answer.status(410, "too old resource version: 10 (200)"));
    server.lists.add(Answer.ok(list("200", "a", "b")));
    server.watches.add(Answer.lines(event("ADDED", "c", "201"),
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"too old resource version: 201 (300)\",\"reason\":\"Expired\",\"code\":410}}"));
    server.lists.add(Answer.ok(list("300", "b", "c")));

    start();

    await().atMost(WITHIN).until(() -> server.watchRequests().size() == 3);
    assertThat(seen).containsExactly("listed a", "listed a,b", "added c", "listed b,c");
    assertThat(watchedFrom()).containsExactly("10", "200", "300");
    assertThat(server.listRequests()).hasSize(3);
  }

  @Test
  void aMalformedLineIsSkippedByWatchingAgainFromTheLastVersionRead() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10")));
    server.watches.add(Answer.lines(event("ADDED", "a", "11"), "{\"type\":\"ADDED\",\"object\":{\"metadata\":", event("ADDED", "b", "12")));
    server.watches.add(Answer.lines(event("ADDED", "b", "12")));

    start();

    await().atMost(WITHIN).until(() -> server.watchRequests().size() == 3);
    // b came once: from the second watch, which the server starts after version 11.
    assertThat(seen).containsExactly("listed ", "added a", "added b");
    assertThat(watchedFrom()).containsExactly("10", "11", "12");
    assertThat(server.listRequests()).hasSize(1);
  }

  @Test
  void aMalformedFirstLineIsSaidInOneWarning() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10")));
    server.watches.add(Answer.lines("{\"type\":\"ADDED\",\"object\":{\"metadata\":"));
    server.watches.add(Answer.lines(event("ADDED", "a", "11")));

    try (var log = io.gpuadmission.testing.LogCapture.of(ListWatch.class, true)) {
      start();

      await().atMost(WITHIN).until(() -> seen.contains("added a"));
      var warnings = log.records().stream().filter(r -> r.getLevel().intValue() == java.util.logging.Level.WARNING.intValue())
          .map(io.gpuadmission.testing.LogCapture::text).toList();
      assertThat(warnings).singleElement().asString().startsWith("pods of node gpu-1: skipped a line that is not a watch event (")
          .endsWith("); watching again from resourceVersion 10; trying again, first in 50 ms");
    }
  }

  @Test
  void anApiServerDownAtStartIsAskedAgainUntilItAnswers() throws Exception {
    var port = new java.net.ServerSocket(0);
    var free = port.getLocalPort();
    port.close();
    api = ApiServer.at("http://127.0.0.1:" + free, Path.of("no-service-account"), false, Duration.ofSeconds(5));
    server = null;
    var handler = new CopyOnWriteArrayList<String>();
    watch = new ListWatch(api, "/api/v1/pods", "", "pods", new ListWatch.Handler() {
      @Override
      public void listed(List<JsonNode> items) {
        handler.add("listed " + items.size());
      }

      @Override
      public void added(JsonNode object) {
        handler.add("added");
      }

      @Override
      public void modified(JsonNode object) {}

      @Override
      public void deleted(JsonNode object) {}
    }, Duration.ofMillis(50)).start();
    Thread.sleep(300);
    assertThat(watch.synced()).isFalse();

    server = new ScriptedApiServer(free);
    server.lists.add(Answer.ok(list("5", "a", "b")));
    server.watches.add(Answer.lines(event("ADDED", "c", "6")));

    await().atMost(WITHIN).until(() -> handler.size() == 2);
    assertThat(handler).containsExactly("listed 2", "added");
    assertThat(watch.synced()).isTrue();
  }

  @Test
  void aWatchThatBreaksOffMidwayResumesFromTheLastEventAfterAPause() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10")));
    server.watches.add(Answer.lines(event("ADDED", "a", "11")));
    server.watches.add(Answer.status(503, "etcd leader changed"));
    server.watches.add(Answer.status(503, "etcd leader changed"));
    server.watches.add(Answer.lines(event("ADDED", "b", "12")));

    start();

    await().atMost(WITHIN).until(() -> server.watchRequests().size() == 5);
    assertThat(watchedFrom()).containsExactly("10", "11", "11", "11", "12");
    assertThat(seen).containsExactly("listed ", "added a", "added b");
    assertThat(server.listRequests()).hasSize(1);
  }

  @Test
  void aServerThatEndsEveryWatchAtOnceIsAskedAfterGrowingPauses() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10", "a")));
    for (int i = 0; i < 200; i++) {
      server.watches.add(Answer.lines());
    }

    start();

    // Pauses of 50, 100, 200, 400, 800 ms: at most 6 watches in the first 1.5 s (without them: 200
    // at once). A slow machine makes fewer, never more.
    await().atMost(WITHIN).until(() -> server.watchRequests().size() >= 3);
    Thread.sleep(1500);
    assertThat(server.watchRequests().size()).isBetween(3, 7);
    assertThat(watchedFrom()).containsOnly("10");
    assertThat(server.listRequests()).hasSize(1);
  }

  @Test
  void aVersionGoneAgainRightAfterItsListIsListedAgainOnlyAfterGrowingPauses() throws Exception {
    server = ScriptedApiServer.start();
    for (int i = 0; i < 100; i++) {
      server.lists.add(Answer.ok(list(String.valueOf(10 + i), "a")));
      server.watches.add(Answer.status(410, "too old resource version"));
    }

    start();

    // The first 410 lists again at once, every later one (no event in between) after a pause.
    await().atMost(WITHIN).until(() -> server.listRequests().size() >= 3);
    Thread.sleep(1500);
    assertThat(server.listRequests().size()).isBetween(3, 8);
  }

  @Test
  void aLineTheServerSendsAgainAtEveryWatchIsRetriedAfterGrowingPauses() throws Exception {
    server = ScriptedApiServer.start();
    server.lists.add(Answer.ok(list("10", "a")));
    for (int i = 0; i < 200; i++) {
      server.watches.add(Answer.lines("{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\", BROKEN"));
    }

    start();

    await().atMost(WITHIN).until(() -> server.watchRequests().size() >= 3);
    Thread.sleep(1500);
    assertThat(server.watchRequests().size()).isBetween(3, 7);
    assertThat(seen).containsExactly("listed a");
  }
}
