package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import io.gpuadmission.support.WebhookCalls;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * /validate against a cluster: nodes, namespaces and pods live in the fabric8 mock API server
 * (CRUD mode) and reach the webhook through its informers, as in production.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class ClusterAdmissionTest {
  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject InformerClusterView cluster;
  @Inject NodeInventory nodes;

  @BeforeEach
  void informersSynced() {
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.synced() && nodes.nodes().size() == 5);
  }

  @AfterEach
  void removePods() {
    client.pods().inAnyNamespace().delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.gangPods("default", "pytorch-dist-nccl").isEmpty());
  }

  static ObjectNode pod(String fixture) {
    return (ObjectNode) Fixtures.yamlTree(Fixtures.path(fixture));
  }

  JsonNode validate(String review) {
    return WebhookCalls.post(base, "/validate", review);
  }

  /** Creates the pod through the API server and waits until the pod informer has it. */
  void createAndAwait(ObjectNode pod, String label, int gangSize) {
    client.resource(KubernetesJson.mapper().convertValue(pod, Pod.class)).create();
    await().atMost(Duration.ofSeconds(5)).until(() -> cluster.gangPods("default", label).size() == gangSize);
  }

  /** Sets one limit of the pod's first container. */
  static ObjectNode withLimit(ObjectNode pod, String resource, String amount) {
    ((ObjectNode) pod.at("/spec/containers/0/resources/limits")).put(resource, amount);
    return pod;
  }

  static ObjectNode renamed(ObjectNode pod, String name) {
    ((ObjectNode) pod.path("metadata")).put("name", name);
    return pod;
  }

  static String message(JsonNode response) {
    return response.path("response").path("status").path("message").asText();
  }

  @Test
  void refusesGpuMemoryLargerThanAnyGpuOfTheCgpuPoolWithExactResponse() {
    var share = pod("mutation/cgpu-test-pod/pod.yaml");
    withLimit(share, "aliyun.com/gpu-mem", "16");

    var response = validate(Reviews.create("5b0f8a7e-2d1c-4e3b-9a8f-7c6d5e4f3a21", share));

    assertThat(response)
        .isEqualTo(
            KubernetesJson.mapper().valueToTree(Map.of(
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
                        "message",
                        "Pod \"cgpu-test-0\": asks aliyun.com/gpu-mem=16 but the largest GPU in pool \"cgpu\" has 15"
                            + " (Tesla-V100-SXM2-16GB, 16130MiB); a GPU-memory share is placed on one GPU: ask for at most 15")))));
  }

  @Test
  void refusesShareLargerThanTheSeedsTeslaM40() {
    var share = pod("mutation/cgpu-test-no-isolation-pod/pod.yaml");
    withLimit(share, "aliyun.com/gpu-mem", "12");

    assertThat(message(validate(Reviews.create("u-m40", share))))
        .isEqualTo(
            "Pod \"cgpu-test-no-isolation-0\": asks aliyun.com/gpu-mem=12 but the largest GPU in pool \"share\" has 11"
                + " (Tesla-M40, 12209MiB); a GPU-memory share is placed on one GPU: ask for at most 11");
  }

  @Test
  void refusesModelNoNodeHas() {
    var p = pod("mutation/tf-notebook-pod/pod.yaml");
    ((ObjectNode) p.at("/spec/nodeSelector")).put("aliyun.accelerator/nvidia_name", "Tesla-P100-PCIE-16GB");

    assertThat(message(validate(Reviews.create("u-model", p))))
        .isEqualTo(
            "Pod \"tf-notebook-5d4b8c7f9-abcde\": asks GPU model \"Tesla-P100-PCIE-16GB\" but no node has it (known models:"
                + " Tesla-M40, Tesla-V100-SXM2-16GB); use one of those, or, if its node pool scales from zero, list it in policy"
                + " feasibility.scaleFromZeroModels");
  }

  @Test
  void refusesAMinimumGpuMemoryTheModelThePodPinsLacks() {
    var p = pod("mutation/tf-notebook-pod/pod.yaml"); // pins Tesla-M40 (12209MiB per GPU) by nodeSelector
    ((ObjectNode) p.path("metadata")).putObject("annotations").put("gpu-admission.io/min-gpu-memory", "16Gi");

    assertThat(message(validate(Reviews.create("u-min-model", p))))
        .isEqualTo(
            "Pod \"tf-notebook-5d4b8c7f9-abcde\": asks gpu-admission.io/min-gpu-memory 16Gi but the GPU model it selects"
                + " (aliyun.accelerator/nvidia_name), Tesla-M40, has 12209MiB per GPU; select a model that has it (Tesla-V100-SXM2-16GB)"
                + " or lower the minimum");
  }

  @Test
  void refusesMoreWholeGpusThanTheLargestTopologyNode() {
    var p = pod("cluster/gang-master.yaml");
    withLimit(p, "aliyun.com/gpu", "16");

    assertThat(message(validate(Reviews.create("u-16", p))))
        .isEqualTo(
            "Pod \"pytorch-dist-nccl-master-0\": asks 16 whole GPUs (aliyun.com/gpu) but the largest node offering aliyun.com/gpu in pool"
                + " \"topology\" has 8"
                + " (cn-beijing.i-topo-v100-a); ask for at most 8 per pod and spread the job over more pods");
  }

  @Test
  void letsARunningPodUpdateItsAnnotationsButChecksAChangedGangLabel() {
    var before = pod("cluster/gang-master.yaml");
    withLimit(before, "aliyun.com/gpu", "16");
    var annotated = before.deepCopy();
    ((ObjectNode) annotated.path("metadata")).putObject("annotations").put("example.com/step", "1200");
    var relabelled = before.deepCopy();
    ((ObjectNode) relabelled.at("/metadata/labels")).put("gpu-topology-replica", "0");

    assertThat(validate(Reviews.update("u-upd-1", before, annotated)).path("response").path("allowed").asBoolean()).isTrue();
    assertThat(message(validate(Reviews.update("u-upd-2", before, relabelled))))
        .isEqualTo(
            "Pod \"pytorch-dist-nccl-master-0\": (1) label gpu-topology-replica is \"0\"; it must be a positive integer"
                + " (the total number of pods of the job), or \"true\" as Arena writes it; (2) asks 16 whole GPUs (aliyun.com/gpu) but the"
                + " largest node offering aliyun.com/gpu in pool \"topology\" has 8 (cn-beijing.i-topo-v100-a); ask for at most 8 per pod and spread"
                + " the job over more pods");
  }

  @Test
  void refusesGangMemberDisagreeingWithMemberInTheInformerCache() {
    createAndAwait(pod("cluster/gang-master.yaml"), "pytorch-dist-nccl", 1);
    var worker = renamed(pod("cluster/gang-master.yaml"), "pytorch-dist-nccl-worker-0");
    withLimit(worker, "aliyun.com/gpu", "2");

    assertThat(message(validate(Reviews.create("u-gang", worker))))
        .isEqualTo(
            "Pod \"pytorch-dist-nccl-worker-0\": gang \"pytorch-dist-nccl\": pod asks aliyun.com/gpu=2 but member"
                + " pytorch-dist-nccl-master-0 asks 1; all pods of a gpu-topology job must request the same resources");
  }

  @Test
  void admitsOnlyOneOfTwoDisagreeingMembersPostedAtTheSameMoment() throws Exception {
    var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 5; round++) {
        var gang = "concurrent-" + round;
        var start = new java.util.concurrent.CountDownLatch(1);
        var futures = new java.util.ArrayList<java.util.concurrent.Future<JsonNode>>();
        for (var gpus : new String[] {"1", "2"}) {
          var member = pod("cluster/gang-master.yaml");
          ((ObjectNode) member.path("metadata")).put("name", gang + "-" + gpus);
          ((ObjectNode) member.at("/metadata/labels")).put("gpu-topology", gang);
          withLimit(member, "aliyun.com/gpu", gpus);
          var review = Reviews.create("u-" + gang + "-" + gpus, member);
          futures.add(pool.submit(() -> { start.await(); return validate(review); }));
        }
        start.countDown();
        var allowed = 0;
        for (var f : futures) {
          allowed += f.get(20, java.util.concurrent.TimeUnit.SECONDS).path("response").path("allowed").asBoolean() ? 1 : 0;
        }
        assertThat(allowed).as("round %d: exactly one of two disagreeing members is admitted", round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void refusesGangNameAlreadyUsedByAnotherOwner() {
    createAndAwait(pod("cluster/gang-master.yaml"), "pytorch-dist-nccl", 1);
    var other = renamed(pod("cluster/gang-master.yaml"), "other-job-master-0");
    var owner = (ObjectNode) other.at("/metadata/ownerReferences/0");
    owner.put("name", "other-job").put("uid", "11111111-2222-4333-8444-555555555555");

    assertThat(message(validate(Reviews.create("u-collide", other))))
        .isEqualTo(
            "Pod \"other-job-master-0\": gang \"pytorch-dist-nccl\": the name is already used by pods of PyTorchJob"
                + " \"pytorch-dist-nccl\" (member pytorch-dist-nccl-master-0); give this job its own gpu-topology value");
  }

  @Test
  void refusesMoreLiveMembersThanTheReplicaCount() {
    createAndAwait(pod("cluster/gang-master.yaml"), "pytorch-dist-nccl", 1);
    createAndAwait(renamed(pod("cluster/gang-master.yaml"), "pytorch-dist-nccl-worker-0"), "pytorch-dist-nccl", 2);
    var worker = renamed(pod("cluster/gang-master.yaml"), "pytorch-dist-nccl-worker-1");

    assertThat(message(validate(Reviews.create("u-count", worker))))
        .isEqualTo(
            "Pod \"pytorch-dist-nccl-worker-1\": gang \"pytorch-dist-nccl\": already has 2 live members"
                + " (pytorch-dist-nccl-master-0, pytorch-dist-nccl-worker-0) and declares"
                + " gpu-topology-replica \"2\"; this pod would be member 3: raise gpu-topology-replica or delete the leftover pods");
  }

  @Test
  void tellsArenaJobsApartByOwnerAndChecksEachGang() {
    createAndAwait(pod("mutation/arena-topology-pod/expected.yaml"), "true", 1);

    var otherJob = renamed(pod("mutation/arena-topology-pod/expected.yaml"), "resnet-topo-worker-0");
    ((ObjectNode) otherJob.at("/metadata/ownerReferences/0")).put("name", "resnet-topo").put("uid", "22222222-3333-4444-8555-666666666666");
    withLimit(otherJob, "aliyun.com/gpu", "2");
    assertThat(validate(Reviews.create("u-arena-1", otherJob)).path("response").path("allowed").asBoolean()).isTrue();

    var sameJob = renamed(pod("mutation/arena-topology-pod/expected.yaml"), "mnist-topo-worker-1");
    withLimit(sameJob, "aliyun.com/gpu", "2");
    assertThat(message(validate(Reviews.create("u-arena-2", sameJob))))
        .isEqualTo(
            "Pod \"mnist-topo-worker-1\": gang \"mnist-topo\": pod asks aliyun.com/gpu=2 but member mnist-topo-worker-0"
                + " asks 4; all pods of a gpu-topology job must request the same resources");
  }

  @Test
  void refusesHostNamespacesWherePodSecurityForbidsThem() {
    var p = pod("cluster/gang-master.yaml");
    ((ObjectNode) p.path("metadata")).put("namespace", "team-restricted");

    assertThat(message(validate(Reviews.create("u-psa", p))))
        .isEqualTo(
            "Pod \"pytorch-dist-nccl-master-0\": namespace \"team-restricted\" enforces Pod Security \"baseline\", which"
                + " forbids hostIPC, hostNetwork, hostPID (topology jobs need them); label the namespace"
                + " pod-security.kubernetes.io/enforce=privileged or run the job in another namespace");
  }

  @Test
  void answersPyTorchJobWithWarningsListingWhatItsPodsWillGet() {
    var job = pod("workloads/pytorchjob-labels-only.yaml");

    var response = validate(Reviews.create("6c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", job));

    var change = "topology job \"pytorch-dist-nccl\": moved nvidia.com/gpu to aliyun.com/gpu; set hostIPC, hostNetwork,"
        + " hostPID; dnsPolicy ClusterFirstWithHostNet; nodeSelector ack.node.gpu.schedule=topology";
    assertThat(response)
        .isEqualTo(
            KubernetesJson.mapper().valueToTree(Map.of(
                "apiVersion", "admission.k8s.io/v1",
                "kind", "AdmissionReview",
                "response", Map.of(
                    "uid", "6c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
                    "allowed", true,
                    "warnings", java.util.List.of(
                        "gpu-admission: Master pods will get: " + change,
                        "gpu-admission: Worker pods will get: " + change)))));
  }
}
