package io.gpuadmission.extender;

import static io.gpuadmission.extender.SchedulerCalls.args;
import static io.gpuadmission.extender.SchedulerCalls.bind;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.SchedulerCaller;
import io.gpuadmission.support.TrustAnything;
import io.gpuadmission.tls.CertificateIssuer;
import io.gpuadmission.tls.Pem;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 33 over real HTTPS, on the mock API server of PreemptionEndpointTest (three full nodes, a
 * pending high-priority pod whose filter call would start evictions, and a pending pod that fits):
 * every extender verb without a client certificate, with one from another CA, or with the serving
 * certificate (same CA, but not a client's) is refused with a reason and changes nothing; with
 * kube-scheduler's certificate the same calls work. The admission endpoints and health take none.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class ExtenderCallerTest {
  private static final String NS = PrioCluster.NS;

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;

  @BeforeEach
  void fullNodesAPendingHighPodAndAPendingPodThatFits() {
    PrioCluster.create(client, ledger, gate);
  }

  @AfterEach
  void removeEverything() {
    PrioCluster.remove(client, ledger);
  }

  @Test
  void refusesEveryVerbToCallersWithoutKubeSchedulersCertificateAndChangesNothing() throws Exception {
    var high = create(fromFixture("high-8g", 8, 1000, "PreemptLowerPriority"));
    var fits = create(fromFixture("fits-4g", 4, 0, "Never"));
    var calls = calls(high, fits);
    var otherCa = CertificateIssuer.newCa("another-ca", Instant.now(), Duration.ofDays(1));
    var otherCaller = CertificateIssuer.client(otherCa, otherCa.caCertificates(), "system:kube-scheduler", Instant.now(), Duration.ofDays(1));
    var serving = SchedulerCaller.context(
        Pem.readCertificates(Files.readString(Path.of("certs/dev/tls.crt"))), Pem.readPrivateKey(Files.readString(Path.of("certs/dev/tls.key"))));
    record Caller(String name, SSLContext context, int status, String reason, String error) {}
    var callers = List.of(
        new Caller("no certificate", TrustAnything.context(), 401, "no_certificate",
            "the extender takes calls from kube-scheduler only: present its client certificate (tlsConfig certFile/keyFile in the extender stanza)"),
        new Caller("another CA", SchedulerCaller.context(List.of(otherCaller.certificate()), otherCaller.key()), 401, "untrusted",
            "client certificate \"CN=system:kube-scheduler\" is not signed by a trusted client CA or not valid now: "),
        new Caller("the serving certificate", serving, 403, "not_client",
            "certificate \"CN=gpu-admission.gpu-admission.svc\" is not meant for client authentication"));

    for (var caller : callers) {
      var before = refusals(caller.reason());
      for (var call : calls.entrySet()) {
        var answer = call.getValue().send(SchedulerCaller.given(caller.context()).baseUri(base.toString()).contentType(ContentType.JSON));
        assertThat(answer.statusCode()).as(caller.name() + " " + call.getKey()).isEqualTo(caller.status());
        assertThat(answer.contentType()).as(call.getKey()).startsWith("application/json");
        assertThat(answer.jsonPath().getString("Error")).as(caller.name() + " " + call.getKey()).startsWith(caller.error());
      }
      assertThat(refusals(caller.reason())).as(caller.name()).isEqualTo(before + calls.size());
    }

    // Nothing happened: no Binding, no nomination, no eviction, even after the leader's
    // preemption delay (3 s in tests) that a filter call for the high pod would have started.
    await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(8)).until(() ->
        client.pods().inNamespace(NS).list().getItems().stream().noneMatch(p -> p.getMetadata().getDeletionTimestamp() != null)
            && client.bindings().inNamespace(NS).withName("fits-4g").get() == null
            && !pod("fits-4g").getMetadata().getAnnotations().containsKey("ALIYUN_COM_GPU_MEM_IDX")
            && pod("high-8g").getStatus().getNominatedNodeName() == null);

    // kube-scheduler's certificate: the same calls are answered, and the bind binds.
    for (var call : calls.entrySet()) {
      var answer = call.getValue().send(SchedulerCaller.given().baseUri(base.toString()).contentType(ContentType.JSON));
      assertThat(answer.statusCode()).as(call.getKey() + ": " + answer.asString()).isEqualTo(200);
      if (call.getKey().equals("bind")) {
        assertThat(answer.asString()).isEqualTo("{\"Error\":\"\"}");
        assertThat(client.bindings().inNamespace(NS).withName("fits-4g").get().getTarget().getName()).isEqualTo("share-a");
        assertThat(pod("fits-4g").getMetadata().getAnnotations()).containsKey("ALIYUN_COM_GPU_MEM_IDX");
      }
    }
  }

  /** A client asking for HTTP/2, as kube-scheduler's does, is answered over HTTP/1.1 (the server offers no h2) and judged alike. */
  @Test
  void refusesAClientAskingHttp2WhileAdmissionAndHealthTakeNoCertificate() throws Exception {
    var anonymous = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(TrustAnything.context()).build();
    var inspect = HttpRequest.newBuilder(URI.create(base + "extender/inspect")).build();
    var refused = anonymous.send(inspect, HttpResponse.BodyHandlers.ofString());
    assertThat(refused.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
    assertThat(refused.statusCode()).isEqualTo(401);

    var scheduler = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).sslContext(SchedulerCaller.context()).build();
    var answered = scheduler.send(inspect, HttpResponse.BodyHandlers.ofString());
    assertThat(answered.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
    assertThat(answered.statusCode()).isEqualTo(200);

    var review = HttpRequest.newBuilder(URI.create(base + "mutate")).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(Fixtures.text(Fixtures.path("reviews/pod-topology-worker.json")))).build();
    assertThat(anonymous.send(review, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    var live = HttpRequest.newBuilder(URI.create(base + "q/health/live")).build();
    assertThat(anonymous.send(live, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
  }

  private interface Call {
    Response send(io.restassured.specification.RequestSpecification request);
  }

  /** Every verb kube-scheduler calls, inspect, and gpushare's path of bind. */
  private Map<String, Call> calls(Pod high, Pod fits) {
    var calls = new LinkedHashMap<String, Call>();
    // Bind first: with the certificate it binds the pod before filter and preempt for the high pod
    // set the leader's preemption going.
    calls.put("bind", r -> r.body(bind(fits, "share-a")).post("/extender/bind"));
    calls.put("filter", r -> r.body(args(high, PrioCluster.NODES)).post("/extender/filter"));
    calls.put("prioritize", r -> r.body(args(fits, PrioCluster.NODES)).post("/extender/prioritize"));
    calls.put("preempt", r -> r.body("{\"Pod\":" + KubernetesJson.mapper().valueToTree(high) + ",\"NodeNameToMetaVictims\":{\"share-a\":{\"Pods\":[{\"UID\":\""
        + pod("low-0").getMetadata().getUid() + "\"}],\"NumPDBViolations\":0}}}").post("/extender/preempt"));
    calls.put("inspect", r -> r.get("/extender/inspect"));
    calls.put("inspect node", r -> r.get("/gpushare-scheduler/inspect/share-a"));
    calls.put("gpushare bind", r -> r.body(bind(fits, "share-a")).post("/gpushare-scheduler/bind"));
    return calls;
  }

  private double refusals(String reason) {
    var metrics = SchedulerCaller.given(TrustAnything.contextUnchecked()).baseUri(base.toString()).get("/q/metrics").asString();
    var matcher = Pattern.compile("gpu_admission_extender_refusals_total\\{reason=\"" + reason + "\"} ([0-9.E]+)").matcher(metrics);
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
  }

  private static Pod fromFixture(String name, int gib, int priority, String preemptionPolicy) {
    var pod = PrioCluster.pending(name, priority, gib);
    pod.getSpec().setPreemptionPolicy(preemptionPolicy);
    return pod;
  }

  private Pod create(Pod pod) {
    return client.resource(pod).create();
  }

  private Pod pod(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }
}
