package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.gpuadmission.admission.DecodedReview;
import io.gpuadmission.admission.MalformedReviewException;
import io.gpuadmission.admission.ReviewCodec;
import io.gpuadmission.health.ClusterHealthCheck;
import io.gpuadmission.policy.PolicyStore.PolicySource;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import io.gpuadmission.testing.MockApiServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;

/**
 * The API server goes away and comes back (a fabric8 mock server stopped and started on the same
 * port): the webhook keeps answering from its caches, shows the staleness without turning
 * unready, resyncs when the server returns, and never serves a half-applied policy.
 */
class ApiServerOutageTest {
  private static final Duration WITHIN = Duration.ofSeconds(20);
  private static final String M40 = "gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-M40\n    ml-team-b: Tesla-M40\n";
  private static final String V100 =
      "gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-V100-SXM2-16GB\n    ml-team-b: Tesla-V100-SXM2-16GB\n";

  private static String answer(java.util.function.Function<DecodedReview, io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse> service, String review) {
    try {
      return new String(ReviewCodec.encode(service.apply(ReviewCodec.decode(review.getBytes(StandardCharsets.UTF_8)))), StandardCharsets.UTF_8);
    } catch (MalformedReviewException e) {
      throw new AssertionError(e);
    }
  }

  private static String notebook() {
    return Reviews.create("u-notebook", Fixtures.yamlTree(Fixtures.path("mutation/tf-notebook-pod-namespace-default/pod.yaml")));
  }

  /** A pod asking 16 whole GPUs: whether it fits depends on the nodes in the cache. */
  private static String sixteenGpuPod() {
    var pod = (com.fasterxml.jackson.databind.node.ObjectNode) Fixtures.yamlTree(Fixtures.path("cel/pod-gpu-limits-only.yaml"));
    var limits = (com.fasterxml.jackson.databind.node.ObjectNode) pod.at("/spec/containers/0/resources/limits");
    limits.remove("nvidia.com/gpu");
    limits.put("aliyun.com/gpu", "16"); // the topology pool's resource: the fixture cluster's largest node offering it has 8
    return Reviews.of("u-sixteen", "CREATE", pod, true);
  }

  private static String pinnedModel(String mutateAnswer) throws Exception {
    var patch = io.gpuadmission.admission.KubernetesJson.mapper().readTree(mutateAnswer).path("response").path("patch").asText();
    return new String(java.util.Base64.getDecoder().decode(patch), StandardCharsets.UTF_8);
  }

  @Test
  void informersStartedBeforeTheApiServerIsUpListOnceItIs() throws Exception {
    try (var mock = MockApiServer.start(3, null)) {
      mock.stop();
      var ledger = new io.gpuadmission.placement.GpuLedger();
      try (var client = mock.informerClient();
          var watcher = new LedgerWatcher(client, ledger, io.gpuadmission.policy.PolicyParser::builtInDefault).start()) {
        // The first lists fail (connection refused): fabric8 would stop such an informer for good.
        Thread.sleep(1500);
        assertThat(ledger.nodes()).isEmpty();
        mock.restart();
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(ledger.nodes()).hasSize(3));
      }
    }
  }

  @Test
  void campaignsForThePlacementLeaseFromStartUntilTheApiServerIsUp() throws Exception {
    try (var mock = MockApiServer.start(0, null)) {
      mock.stop();
      var gate = new io.gpuadmission.placement.LeaderGate("replica-a");
      var timing = new PlacementLeadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofMillis(200));
      try (var client = mock.informerClient();
          var leadership = new PlacementLeadership(client, new io.gpuadmission.placement.GpuLedger(), gate, io.gpuadmission.policy.PolicyParser::builtInDefault)
              .start("gpu-admission", "gpu-admission-placement", timing)) {
        // Every attempt so far was refused a connection.
        Thread.sleep(1500);
        assertThat(gate.leading()).isFalse();
        assertThat(gate.leaderless()).isPositive();
        mock.restart();
        await().atMost(WITHIN).until(gate::leading);
        assertThat(gate.leader()).isEqualTo("replica-a");
      }
    }
  }

  @Test
  void answersFromTheLastKnownStateWhileTheApiServerIsAwayAndResyncsWhenItReturns() throws Exception {
    try (var apiServer = MockApiServer.start(5, M40); var client = apiServer.informerClient(); var webhook = new Webhook(client)) {
      await().atMost(WITHIN).until(() -> webhook.nodes.nodes().size() == 5 && webhook.store.active().source() == PolicySource.CONFIGMAP
          && webhook.connectedAfter(0));
      var mutated = answer(webhook.mutation::review, notebook());
      var validated = answer(webhook.validation::review, sixteenGpuPod());
      assertThat(pinnedModel(mutated)).contains("\"aliyun.accelerator/nvidia_name\":\"Tesla-M40\"");
      assertThat(validated).contains("\"allowed\":false").contains("asks 16 whole GPUs (aliyun.com/gpu) but the largest node offering aliyun.com/gpu in the cluster has 8");

      apiServer.stop();
      // Lost once the informers have been without a watch for the grace (one check a second).
      await().atMost(WITHIN).until(() -> !webhook.connectedAfter(1));
      assertThat(webhook.connectedAfter(32)).isFalse();

      assertThat(answer(webhook.mutation::review, notebook())).isEqualTo(mutated);
      assertThat(answer(webhook.validation::review, sixteenGpuPod())).isEqualTo(validated);
      assertThat(webhook.nodes.nodes()).hasSize(5);
      assertThat(webhook.contact.secondsSinceContact()).isEqualTo(42);
      var registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
      new ClusterContactMetrics().register(null, registry, webhook.contact);
      assertThat(registry.get("gpu_admission_cluster_connected").gauge().value()).isZero();
      assertThat(registry.get("gpu_admission_cluster_seconds_since_contact").gauge().value()).isEqualTo(42.0);
      var health = new ClusterHealthCheck(webhook.contact, webhook.firstSync).call();
      assertThat(health.getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
      assertThat(health.getData()).contains(Map.of("configured", true, "connected", false, "secondsSinceContact", 42L));

      apiServer.restart();
      await().atMost(WITHIN).until(() -> webhook.connectedAfter(1));
      try (var admin = apiServer.admin()) {
        admin.nodes().withName("cn-beijing.i-2ze8o1a45qdv5q8a7luz").delete();
      }
      apiServer.applyPolicy(V100);
      await().atMost(WITHIN).until(() -> webhook.nodes.nodes().size() == 4
          && pinnedModel(answer(webhook.mutation::review, notebook())).contains("Tesla-V100-SXM2-16GB"));
      assertThat(webhook.contact.secondsSinceContact()).isZero();
      assertThat(registry.get("gpu_admission_cluster_connected").gauge().value()).isEqualTo(1.0);
      assertThat(registry.get("gpu_admission_cluster_seconds_since_contact").gauge().value()).isZero();
      assertThat(new ClusterHealthCheck(webhook.contact, webhook.firstSync).call().getData()).contains(Map.of("configured", true, "connected", true, "secondsSinceContact", 0L));
    }
  }

  @Test
  void keepsTheLastGoodPolicyWholeWhileTheApiServerFlaps() throws Exception {
    try (var apiServer = MockApiServer.start(5, M40); var client = apiServer.informerClient(); var webhook = new Webhook(client)) {
      var reads = new AtomicLong();
      var torn = new AtomicReference<String>();
      var reading = new AtomicBoolean(true);
      // Each policy sets both namespaces alike: a reader that saw them differ saw half a policy.
      var reader = new Thread(() -> {
        while (reading.get()) {
          var defaults = webhook.store.current().gpuModel().namespaceDefaults();
          if (!java.util.Objects.equals(defaults.get("ml-team-a"), defaults.get("ml-team-b"))) {
            torn.compareAndSet(null, defaults.toString());
          }
          reads.incrementAndGet();
          // Thousands of reads a second, without taking a whole core from the suite's other work
          // (on two cores that slowed everything the test waits for).
          java.util.concurrent.locks.LockSupport.parkNanos(50_000);
        }
      });
      reader.start();
      try {
        await().atMost(WITHIN).until(() -> "Tesla-M40".equals(webhook.store.current().gpuModel().namespaceDefaults().get("ml-team-a")));

        apiServer.stop();
        await().atMost(WITHIN).until(() -> !webhook.connectedAfter(1));
        apiServer.restart();
        await().atMost(WITHIN).until(() -> webhook.connectedAfter(1));
        apiServer.applyPolicy(V100);
        await().atMost(WITHIN).until(() -> "Tesla-V100-SXM2-16GB".equals(webhook.store.current().gpuModel().namespaceDefaults().get("ml-team-a")));
        var good = webhook.store.active();

        apiServer.stop();
        await().atMost(WITHIN).until(() -> !webhook.connectedAfter(1));
        apiServer.restart();
        await().atMost(WITHIN).until(() -> webhook.connectedAfter(1));
        apiServer.applyPolicy("gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-M40\n    Team_B: Tesla-M40\n");
        await().atMost(WITHIN).until(() -> webhook.status.lastError().isPresent());

        assertThat(webhook.store.active()).isSameAs(good);
        assertThat(webhook.status.lastError().orElseThrow()).contains("Team_B");
        // The model is pinned only once the node cache, relisted after the restart, shows V100
        // nodes again; the policy that pins it must be the last good one (V100), never the bad one.
        await().atMost(WITHIN).untilAsserted(() -> assertThat(pinnedModel(answer(webhook.mutation::review, notebook()))).contains("Tesla-V100-SXM2-16GB"));
      } finally {
        reading.set(false);
        reader.join();
      }
      assertThat(torn.get()).as("a reader saw half a policy").isNull();
      assertThat(reads.get()).isPositive();
    }
  }
}
