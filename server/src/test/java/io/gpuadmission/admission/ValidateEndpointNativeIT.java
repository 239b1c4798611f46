package io.gpuadmission.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import io.gpuadmission.support.WebhookCalls;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import java.net.URL;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * /validate against the packaged server (the native executable in the native build) watching the
 * mock API server: once Ready (informers synced, policy read), it refuses what the cluster's GPUs
 * could never run with the exact response {@code ClusterAdmissionTest} expects in process, refuses
 * the README's inconsistent PyTorchJob, admits a pod that fits, and answers a body that is not
 * JSON with a 400 and the parser's reason.
 */
@QuarkusIntegrationTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class ValidateEndpointNativeIT {
  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @BeforeEach
  void ready() {
    WebhookCalls.awaitReady(base);
  }

  @Test
  void refusesGpuMemoryLargerThanAnyGpuOfTheCgpuPoolWithExactResponse() {
    var share = (ObjectNode) Fixtures.yamlTree(Fixtures.path("mutation/cgpu-test-pod/pod.yaml"));
    ((ObjectNode) share.at("/spec/containers/0/resources/limits")).put("aliyun.com/gpu-mem", "16");

    var response = WebhookCalls.post(base, "/validate", Reviews.create("5b0f8a7e-2d1c-4e3b-9a8f-7c6d5e4f3a21", share));

    assertThat(response).isEqualTo(KubernetesJson.mapper().valueToTree(Map.of(
        "apiVersion", "admission.k8s.io/v1",
        "kind", "AdmissionReview",
        "response", Map.of(
            "uid", "5b0f8a7e-2d1c-4e3b-9a8f-7c6d5e4f3a21",
            "allowed", false,
            "status", Map.of(
                "apiVersion", "v1",
                "kind", "Status",
                "code", 403,
                "reason", "Invalid",
                "message", "Pod \"cgpu-test-0\": asks aliyun.com/gpu-mem=16 but the largest GPU in pool \"cgpu\" has 15"
                    + " (Tesla-V100-SXM2-16GB, 16130MiB); a GPU-memory share is placed on one GPU: ask for at most 15")))));
  }

  @Test
  void admitsTheSameShareWhenAGpuOfThePoolHasIt() {
    var share = (ObjectNode) Fixtures.yamlTree(Fixtures.path("mutation/cgpu-test-pod/pod.yaml"));
    ((ObjectNode) share.at("/spec/containers/0/resources/limits")).put("aliyun.com/gpu-mem", "15");

    var response = WebhookCalls.post(base, "/validate", Reviews.create("0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", share));

    assertThat(response.path("response").path("uid").asText()).isEqualTo("0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f");
    assertThat(response.path("response").path("allowed").asBoolean()).as(response.toString()).isTrue();
    assertThat(response.path("response").has("status")).as(response.toString()).isFalse();
  }

  @Test
  void refusesTheReadmesPyTorchJobWhoseReplicasAskDifferentGpus() {
    var response = WebhookCalls.post(base, "/validate", Fixtures.text(Fixtures.path("reviews/pytorchjob-worker-2-gpus.json")));

    var status = response.path("response").path("status");
    assertThat(response.path("response").path("allowed").asBoolean()).isFalse();
    assertThat(status.path("code").asInt()).isEqualTo(403);
    assertThat(status.path("message").asText()).isEqualTo("PyTorchJob \"pytorch-dist-nccl\": Worker asks aliyun.com/gpu=2 but Master asks 1;"
        + " all replicas of a gpu-topology job must request the same resources");
  }

  @Test
  void answersABodyThatIsNotJsonWith400AndTheReason() {
    given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON).body("{not json").post("/validate")
        .then()
        .statusCode(400)
        .body("code", equalTo(400))
        .body("reason", equalTo("BadRequest"))
        .body("message", equalTo("body is not JSON: Unexpected character ('n' (code 110)): was expecting double-quote to start field name"
            + " at line 1, column 2"));
  }
}
