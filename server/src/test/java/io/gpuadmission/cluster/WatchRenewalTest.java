package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.WebSocket;
import io.fabric8.mockwebserver.http.WebSocketListener;
import io.gpuadmission.testing.LogCapture;
import io.gpuadmission.testing.MockApiServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A watch that the API server ends is renewed, which is no outage: contact is not said lost and
 * gpu_admission_cluster_connected stays 1. An API server that stays away longer than the grace is
 * an outage, said once.
 */
class WatchRenewalTest {
  private static final Duration WITHIN = Duration.ofSeconds(30);
  private static final String LOST = "informers lost the API server";

  /** A watch whose socket is put in {@code opened}, for the test to end it normally (close code 1000). */
  private static MockResponse watchToEnd(AtomicReference<WebSocket> opened) {
    return new MockResponse().withWebSocketUpgrade(new WebSocketListener() {
      @Override
      public void onOpen(WebSocket socket, io.fabric8.mockwebserver.http.Response response) {
        opened.set(socket);
      }
    });
  }

  private static MockResponse gone() {
    return new MockResponse().setResponseCode(410).setBody(
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":410,"
            + "\"message\":\"too old resource version\"}");
  }

  /**
   * Once contact is made, the nodes informer's watch is ended by the server; its resumed watch is answered 410 Gone (the
   * version was compacted), 1.5 s late (a busy API server), and the one after it is served: the
   * informer is without a watch for about two seconds. Throughout, the contact is checked every
   * 50 ms with a clock that follows real time.
   */
  @Test
  void aWatchTheApiServerEndsIsRenewedWithoutSayingContactWasLost() throws Exception {
    var watches = new AtomicInteger();
    var firstWatch = new AtomicReference<WebSocket>();
    try (var apiServer = MockApiServer.start(3, null)) {
      apiServer.answerInstead(request -> {
        var path = request.getPath();
        if (!path.startsWith("/api/v1/nodes?") || !path.contains("watch=true")) {
          return null;
        }
        return switch (watches.incrementAndGet()) {
          case 1 -> watchToEnd(firstWatch);
          case 2 -> {
            try {
              Thread.sleep(1500);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            yield gone();
          }
          default -> null;
        };
      });
      var others = Set.copyOf(Informers.running());
      try (var log = LogCapture.of(ClusterContact.class, true); var client = apiServer.informerClient(); var webhook = new Webhook(client)) {
        var registry = new SimpleMeterRegistry();
        new ClusterContactMetrics().register(null, registry, webhook.contact);
        var connected = registry.get("gpu_admission_cluster_connected").gauge();
        var sinceContact = registry.get("gpu_admission_cluster_seconds_since_contact").gauge();
        var start = System.nanoTime();
        await().atMost(WITHIN).until(() -> {
          webhook.clock.set(System.nanoTime() - start);
          return webhook.connectedAfter(0);
        });

        await().atMost(WITHIN).until(() -> firstWatch.get() != null);
        firstWatch.get().close(1000, "");
        var seenWithoutWatch = 0;
        var connectedValues = new ArrayList<Double>();
        var sinceContactValues = new ArrayList<Double>();
        var deadline = System.nanoTime() + WITHIN.toNanos();
        while (watches.get() < 3 || !allWatching(others)) {
          assertThat(System.nanoTime()).as("the nodes informer watches again").isLessThan(deadline);
          if (!allWatching(others)) {
            seenWithoutWatch++;
          }
          webhook.clock.set(System.nanoTime() - start);
          webhook.contact.check();
          connectedValues.add(connected.value());
          sinceContactValues.add(sinceContact.value());
          Thread.sleep(50);
        }
        webhook.contact.check();

        assertThat(seenWithoutWatch).as("checks that found an informer without a watch").isGreaterThanOrEqualTo(3);
        assertThat(connectedValues).containsOnly(1.0);
        assertThat(sinceContactValues).containsOnly(0.0);
        assertThat(webhook.contact.connected()).isTrue();
        assertThat(log.records()).extracting(LogCapture::text).noneMatch(line -> line.contains(LOST));
      }
    }
  }

  /** The API server stops: contact is said lost once it has been gone for the grace, not before. */
  @Test
  void anApiServerAwayLongerThanTheGraceIsSaidLostOnce() throws Exception {
    try (var apiServer = MockApiServer.start(3, null);
        var log = LogCapture.of(ClusterContact.class, true);
        var client = apiServer.informerClient();
        var webhook = new Webhook(client)) {
      var registry = new SimpleMeterRegistry();
      new ClusterContactMetrics().register(null, registry, webhook.contact);
      await().atMost(WITHIN).until(() -> webhook.connectedAfter(0));

      apiServer.stop();
      // One check a second (the checker's pace), on a clock that moves a second per check.
      await().atMost(WITHIN).until(() -> !webhook.connectedAfter(1));
      // Lost at the first check 10 s after the last one that found every informer watching.
      assertThat(webhook.contact.secondsSinceContact()).isEqualTo(10);
      webhook.connectedAfter(30);

      assertThat(webhook.contact.secondsSinceContact()).isEqualTo(40);
      assertThat(registry.get("gpu_admission_cluster_connected").gauge().value()).isZero();
      assertThat(registry.get("gpu_admission_cluster_seconds_since_contact").gauge().value()).isEqualTo(40.0);
      var lost = log.records().stream().map(LogCapture::text).filter(line -> line.contains(LOST)).toList();
      assertThat(lost).containsExactly("informers lost the API server (not watching for 10 s): answering from the last known"
          + " nodes, pods and policy until they reconnect");
    }
  }

  private static boolean allWatching(Set<SharedIndexInformer<?>> others) {
    List<SharedIndexInformer<?>> mine = Informers.running().stream().filter(i -> !others.contains(i)).toList();
    return !mine.isEmpty() && mine.stream().allMatch(SharedIndexInformer::isWatching);
  }
}
