package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Layer4Service;
import io.gpuadmission.support.SchedulerCaller;
import io.gpuadmission.support.TrustAnything;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;

/**
 * A frozen placement leader must stall binds for about the Lease's duration, not for as long as it
 * is frozen. kube-scheduler calls the extender through the leader-only Service, which kube-proxy
 * forwards per TCP connection: a connection stays on the pod it was opened to, frozen or not, and
 * only new connections follow the leader label once the next leader has taken the Lease and moved
 * it. Whether kube-scheduler opens a new connection after a call timed out depends on the protocol
 * the extender speaks: Go's net/http closes an HTTP/1.1 connection whose request timed out, so the
 * next call dials again; over HTTP/2 it keeps its one connection, and only its health check (30 s
 * without a frame, then a 15 s ping) drops it, three times the Lease.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = io.gpuadmission.cluster.ClusterFixtures.class)
class FrozenLeaderFailoverTest {
  private static final String NODE = "cn-beijing.i-cgpu-v100-a";
  /** kube-scheduler's httpTimeout (5 s to 10 s in the manifests), scaled down as the Lease is. */
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(3);
  /** When the next leader's label moves the Service to it (the Lease, 15 s, scaled down). */
  private static final Duration LEASE = Duration.ofSeconds(4);
  /** Binds must resume by then: the Lease and a few timed-out calls, well before a Go HTTP/2 health check (45 s). */
  private static final Duration RESUMED_WITHIN = Duration.ofSeconds(30);

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;

  /** A client that calls as kube-scheduler's does: HTTP/2 when the server offers it, a timeout per call. */
  private static HttpClient schedulerClient() throws Exception {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(SchedulerCaller.context()).build();
  }

  private static HttpResponse<String> bind(HttpClient scheduler, int port, Pod pod) throws Exception {
    return bind(scheduler, port, pod, CALL_TIMEOUT);
  }

  private static HttpResponse<String> bind(HttpClient scheduler, int port, Pod pod, Duration timeout) throws Exception {
    var args = Map.of("PodName", pod.getMetadata().getName(), "PodNamespace", pod.getMetadata().getNamespace(),
        "PodUID", pod.getMetadata().getUid(), "Node", NODE);
    var request = HttpRequest.newBuilder(URI.create("https://localhost:" + port + "/extender/bind")).timeout(timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(KubernetesJson.mapper().writeValueAsString(args))).build();
    var answer = scheduler.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    try {
      // The call's own timeout answers first; this only keeps a test from hanging on a client bug.
      return answer.get(timeout.multipliedBy(3).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof HttpTimeoutException timedOut) {
        throw timedOut;
      }
      throw e;
    } catch (java.util.concurrent.TimeoutException e) {
      answer.cancel(true);
      throw new HttpTimeoutException("no answer within " + timeout.multipliedBy(3));
    }
  }

  private Pod createPod(String name) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/pod-init-only-cgpu.yaml")), Pod.class);
    pod.getMetadata().setName(name);
    return client.resource(pod).createOr(existing -> existing.update());
  }

  private void delete(Pod pod) {
    client.resource(pod).delete();
    client.bindings().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).delete();
  }

  /**
   * The old leader answers a bind, then freezes with kube-scheduler's connection to it open; the
   * Service moves to the new leader after the Lease. The next pod's bind, retried as kube-scheduler
   * retries a pod whose bind failed, goes through on a connection to the new leader while the old
   * one is still frozen. (Both endpoints are this application: which pod answers is the proxy's
   * doing; what is tested is whether the client ever leaves the frozen connection.)
   */
  @Test
  void bindsResumeOnTheNewLeaderWhileTheOldOneIsStillFrozen() throws Exception {
    await().atMost(Duration.ofSeconds(20)).until(() -> gate.leading() && ledger.view(NODE).isPresent());
    var oldLeader = new Layer4Service.Endpoint("replica-a", base.getPort());
    var newLeader = new Layer4Service.Endpoint("replica-b", base.getPort());
    var before = createPod("frozen-leader-before");
    var after = createPod("frozen-leader-after");
    try (var service = Layer4Service.start(oldLeader)) {
      var scheduler = schedulerClient();
      // Before the freeze: the connection is made and answered, however slow this machine is.
      var first = bind(scheduler, service.port(), before, Duration.ofSeconds(30));
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).isEqualTo("{\"Error\":\"\"}");

      service.freeze(oldLeader);
      var frozenAt = System.nanoTime();
      var timedOut = 0;
      HttpResponse<String> resumed = null;
      while (resumed == null && System.nanoTime() - frozenAt < RESUMED_WITHIN.toNanos()) {
        if (System.nanoTime() - frozenAt >= LEASE.toNanos()) {
          service.routeNewConnectionsTo(newLeader);
        }
        try {
          resumed = bind(scheduler, service.port(), after);
        } catch (HttpTimeoutException e) {
          timedOut++;
        }
      }

      assertThat(resumed).as("a bind answered within %s of the freeze (%d calls timed out)", RESUMED_WITHIN, timedOut).isNotNull();
      assertThat(resumed.statusCode()).isEqualTo(200);
      assertThat(resumed.body()).isEqualTo("{\"Error\":\"\"}");
      assertThat(timedOut).as("calls that timed out on the frozen leader").isPositive();
      assertThat(service.connectionsTo(newLeader)).as("connections opened to the new leader").isPositive();
      assertThat(client.pods().inNamespace("default").withName("frozen-leader-after").get().getMetadata().getAnnotations())
          .containsEntry("ALIYUN_COM_GPU_MEM_POD", "5");
      assertThat(first.version()).as("asked for HTTP/2, answered in").isEqualTo(HttpClient.Version.HTTP_1_1);
    } finally {
      delete(before);
      delete(after);
      await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claimsOn(NODE).isEmpty());
    }
  }

  /**
   * The server offers no HTTP/2: a client that asks for h2 or http/1.1 in ALPN (as Go's net/http
   * does) is given http/1.1.
   */
  @Test
  void negotiatesHttp11NotHttp2() throws Exception {
    try (var socket = (SSLSocket) TrustAnything.context().getSocketFactory().createSocket("localhost", base.getPort())) {
      socket.setSoTimeout(30_000);
      SSLParameters parameters = socket.getSSLParameters();
      parameters.setApplicationProtocols(new String[] {"h2", "http/1.1"});
      socket.setSSLParameters(parameters);
      socket.startHandshake();

      assertThat(socket.getApplicationProtocol()).isEqualTo("http/1.1");
    }
  }
}
