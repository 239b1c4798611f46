package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.admission.ReviewCodec;
import io.gpuadmission.health.ClusterHealthCheck;
import io.gpuadmission.policy.PolicyStore.PolicySource;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import io.gpuadmission.testing.MockApiServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;

/**
 * A replica that starts while the API server is unreachable: not ready, and GPU pods refused with
 * a reason a person can act on, rather than mutated with the built-in default policy (a pod is
 * mutated only once); once the API server answers, ready, with the cluster's policy applied.
 */
class UnreachableAtStartTest {
  private static final Duration WITHIN = Duration.ofSeconds(30);
  /** The cluster's policy: share pods go to the share pool, where the built-in default says cgpu. */
  private static final String SHARE_POOL = "sharedMemory:\n  isolatedPool: share\n";

  private static JsonNode answer(Webhook webhook, String review) throws Exception {
    var bytes = ReviewCodec.encode(webhook.mutation.review(ReviewCodec.decode(review.getBytes(StandardCharsets.UTF_8))));
    return KubernetesJson.mapper().readTree(bytes).path("response");
  }

  private static JsonNode validated(Webhook webhook, String review) throws Exception {
    var bytes = ReviewCodec.encode(webhook.validation.review(ReviewCodec.decode(review.getBytes(StandardCharsets.UTF_8))));
    return KubernetesJson.mapper().readTree(bytes).path("response");
  }

  /** An MPIJob whose first template (the Launcher) asks no GPU; its Workers do. */
  private static String gpuWorkload() {
    return Reviews.create("u-mpijob", Fixtures.yamlTree(Fixtures.path("workloads/mpijob-launcher-cpu-only.yaml")));
  }

  private static final String TRY_AGAIN =
      " once the gpu-admission pods are Ready (kubectl -n gpu-admission get pods),"
          + " and if they stay unready check that they reach the API server (kubectl -n gpu-admission logs deploy/gpu-admission).";
  private static final String NOT_READ =
      "gpu-admission has not read the cluster's GPU policy yet: the policy ConfigMap "
          + "gpu-admission/gpu-admission-policy has not been read from the API server yet (last attempt: ";

  private static String sharePod() {
    return Reviews.create("u-share", Fixtures.yamlTree(Fixtures.path("mutation/cgpu-test-pod-no-selector/pod.yaml")));
  }

  private static String cpuPod() {
    return Reviews.create("u-cpu", Fixtures.yamlTree(Fixtures.path("mutation/cpu-pod-empty-affinity-term/pod.yaml")));
  }

  @Test
  void notReadyAndRefusesGpuPodsUntilTheClusterPolicyIsReadThenAppliesIt() throws Exception {
    try (var apiServer = MockApiServer.start(3, SHARE_POOL)) {
      apiServer.stop();
      try (var client = apiServer.informerClient(); var webhook = new Webhook(client)) {
        // Every informer has tried and been refused a connection (not only the first to fail: the
        // refusals below name the policy informer's own last attempt).
        await().atMost(WITHIN).until(webhook::everyInformerFailed);

        var health = new ClusterHealthCheck(webhook.contact, webhook.firstSync).call();
        assertThat(health.getStatus()).isEqualTo(HealthCheckResponse.Status.DOWN);
        var waitingFor = String.valueOf(health.getData().orElseThrow().get("waitingFor"));
        var connectionRefused = "Connection refused: /127\\.0\\.0\\.1:" + apiServer.port();
        assertThat(waitingFor).matches("first list of node, pod \\(gpu-topology\\), namespace, policy ConfigMap not done \\(last attempt: "
            + "\\w+: " + connectionRefused + "\\); the policy ConfigMap gpu-admission/gpu-admission-policy has not been read from the API server yet"
            + " \\(last attempt: \\w+: " + connectionRefused + "\\)");
        assertThat(webhook.firstSync.done()).isFalse();

        var refused = answer(webhook, sharePod());
        assertThat(refused.path("allowed").asBoolean()).isFalse();
        assertThat(refused.path("patch").isMissingNode()).isTrue();
        assertThat(refused.at("/status/code").asInt()).isEqualTo(503);
        assertThat(refused.at("/status/reason").asText()).isEqualTo("ServiceUnavailable");
        assertThat(refused.at("/status/message").asText())
            .startsWith(NOT_READ)
            .endsWith(". GPU pods are refused until it has, rather than mutated by a policy that may not be the cluster's;"
                + " create the pod again" + TRY_AGAIN);
        var cpu = answer(webhook, cpuPod());
        assertThat(cpu.path("allowed").asBoolean()).isTrue();
        assertThat(cpu.path("patch").isMissingNode()).isTrue();
        assertThat(cpu.path("warnings").get(0).asText()).startsWith("gpu-admission has not read the cluster's GPU policy yet: ")
            .endsWith("; admitted unchanged");

        // /validate refuses GPU objects the same way, a workload for any template that asks a GPU.
        for (var subjectAndReview : List.of(List.of("Pod \"cgpu-test-0\": ", sharePod()), List.of("MPIJob \"horovod-resnet\": ", gpuWorkload()))) {
          var subject = subjectAndReview.get(0);
          var notJudged = validated(webhook, subjectAndReview.get(1));
          assertThat(notJudged.path("allowed").asBoolean()).isFalse();
          assertThat(notJudged.at("/status/code").asInt()).isEqualTo(503);
          assertThat(notJudged.at("/status/reason").asText()).isEqualTo("ServiceUnavailable");
          assertThat(notJudged.at("/status/message").asText())
              .startsWith(subject + NOT_READ)
              .endsWith(". GPU pods and workloads are refused until it has, rather than judged by a policy that may not be the"
                  + " cluster's; create or apply it again" + TRY_AGAIN);
        }
        var cpuValidated = validated(webhook, cpuPod());
        assertThat(cpuValidated.path("allowed").asBoolean()).isTrue();
        assertThat(cpuValidated.path("warnings").get(0).asText()).startsWith("Pod \"batch-worker-0\": " + NOT_READ)
            .endsWith("; admitted unjudged");
        // The policy ConfigMap is judged all the same: it is how the policy gets mended.
        var configMap = Fixtures.yamlTree(Fixtures.path("cli/policy-configmap-invalid.yaml"));
        var invalidPolicy = validated(webhook, Reviews.create("u-policy", configMap));
        assertThat(invalidPolicy.path("allowed").asBoolean()).isFalse();
        assertThat(invalidPolicy.at("/status/code").asInt()).isEqualTo(403);
        assertThat(invalidPolicy.at("/status/reason").asText()).isEqualTo("Invalid");

        apiServer.restart();
        await().atMost(WITHIN).until(webhook.firstSync::done);
        assertThat(webhook.store.active().source()).isEqualTo(PolicySource.CONFIGMAP);
        assertThat(new ClusterHealthCheck(webhook.contact, webhook.firstSync).call().getStatus()).isEqualTo(HealthCheckResponse.Status.UP);
        var mutated = answer(webhook, sharePod());
        assertThat(mutated.path("allowed").asBoolean()).isTrue();
        var patch = new String(Base64.getDecoder().decode(mutated.path("patch").asText()), StandardCharsets.UTF_8);
        assertThat(patch).contains("{\"op\":\"add\",\"path\":\"/spec/nodeSelector\",\"value\":{\"ack.node.gpu.schedule\":\"share\"}}");
      }
    }
  }

  @Test
  void aClusterWithoutPolicyConfigMapIsReadOnceListed() throws Exception {
    try (var apiServer = MockApiServer.start(2, null); var client = apiServer.informerClient(); var webhook = new Webhook(client)) {
      await().atMost(WITHIN).until(webhook.firstSync::done);
      assertThat(webhook.store.active().source()).isEqualTo(PolicySource.DEFAULT);
      assertThat(webhook.store.unread()).isEmpty();
      var mutated = answer(webhook, sharePod());
      var patch = new String(Base64.getDecoder().decode(mutated.path("patch").asText()), StandardCharsets.UTF_8);
      assertThat(patch).contains("{\"op\":\"add\",\"path\":\"/spec/nodeSelector\",\"value\":{\"ack.node.gpu.schedule\":\"cgpu\"}}");
    }
  }
}
