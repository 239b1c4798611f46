package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import io.gpuadmission.support.WebhookCalls;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Gang members through their life in a cluster, as users hit it: deleted, failed, recreated,
 * replaced by a rollout, joined by an MPI launcher, named by a custom job label. Pods live in the
 * fabric8 mock API server and reach /validate's gang checks through the pod informer.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class GangLifecycleClusterTest {
  private static final String CUSTOM_LABEL = "train.example.com/gang";

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject InformerClusterView cluster;
  @Inject PodInventory gangPods;
  @Inject NodeInventory nodes;
  @Inject PolicyStore policies;

  @BeforeEach
  void informersSynced() {
    await().atMost(Duration.ofSeconds(10)).until(() -> cluster.synced() && nodes.nodes().size() == 5);
  }

  @AfterEach
  void removePodsAndPolicy() {
    client.configMaps().inNamespace("gpu-admission").withName("gpu-admission-policy").delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> policies.current().topology().jobLabel().equals("gpu-topology"));
    client.pods().inAnyNamespace().delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> client.pods().inAnyNamespace().list().getItems().isEmpty());
  }

  /** A hand-made member of gang {@code job}: the fixture master renamed, with its own GPU count. */
  static ObjectNode member(String job, String name, String replicas, String gpus) {
    var pod = (ObjectNode) Fixtures.yamlTree(Fixtures.path("cluster/gang-master.yaml"));
    var metadata = (ObjectNode) pod.path("metadata");
    metadata.put("name", name);
    metadata.remove("ownerReferences");
    ((ObjectNode) metadata.path("labels")).put("gpu-topology", job).put("gpu-topology-replica", replicas);
    ((ObjectNode) pod.at("/spec/containers/0/resources/limits")).put("aliyun.com/gpu", gpus);
    return pod;
  }

  /** Made by ReplicaSet {@code <deployment>-<hash>} of a Deployment, as the Deployment controller labels it. */
  static ObjectNode ofReplicaSet(ObjectNode pod, String deployment, String hash) {
    var metadata = (ObjectNode) pod.path("metadata");
    ((ObjectNode) metadata.path("labels")).put("pod-template-hash", hash);
    metadata.putArray("ownerReferences").addObject()
        .put("apiVersion", "apps/v1").put("kind", "ReplicaSet").put("name", deployment + "-" + hash)
        .put("uid", "00000000-0000-4000-8000-" + String.format("%012x", hash.hashCode() & 0xffffffffL)).put("controller", true);
    return pod;
  }

  JsonNode validate(ObjectNode pod) {
    return post(Reviews.create("u-" + pod.path("metadata").path("name").asText(), pod));
  }

  JsonNode post(String review) {
    return WebhookCalls.post(base, "/validate", review);
  }

  static boolean allowed(JsonNode response) {
    return response.path("response").path("allowed").asBoolean();
  }

  static String message(JsonNode response) {
    return response.path("response").path("status").path("message").asText();
  }

  /** Admitted by /validate (so this replica's ledger records it), then created, as the API server does. */
  void admitAndCreate(ObjectNode pod, String job, int liveMembers) {
    var response = validate(pod);
    assertThat(allowed(response)).as(message(response)).isTrue();
    client.resource(KubernetesJson.mapper().convertValue(pod, Pod.class)).create();
    await().atMost(Duration.ofSeconds(5)).until(() -> cluster.gangPods("default", job).size() == liveMembers);
  }

  @Test
  void forceDeletedMembersFreeTheirPlaceForAGangRecreatedWithOtherResources() {
    admitAndCreate(member("redo", "w-0", "2", "1"), "redo", 1);
    admitAndCreate(member("redo", "w-1", "2", "1"), "redo", 2);

    client.pods().inNamespace("default").withName("w-0").withGracePeriod(0).delete();
    client.pods().inNamespace("default").withName("w-1").withGracePeriod(0).delete();
    await().atMost(Duration.ofSeconds(5)).until(() -> cluster.gangPods("default", "redo").isEmpty());

    admitAndCreate(member("redo", "w-0", "2", "2"), "redo", 1);
    assertThat(allowed(validate(member("redo", "w-1", "2", "2")))).isTrue();
  }

  @Test
  void replacementUnderANewNameTakesTheDeletedMembersPlace() {
    admitAndCreate(member("swap", "swap-a", "2", "1"), "swap", 1);
    admitAndCreate(member("swap", "swap-b", "2", "1"), "swap", 2);

    client.pods().inNamespace("default").withName("swap-b").delete();
    await().atMost(Duration.ofSeconds(5)).until(() -> cluster.gangPods("default", "swap").size() == 1);

    assertThat(allowed(validate(member("swap", "swap-c", "2", "1")))).isTrue();
  }

  @Test
  void failedMemberFreesItsPlace() {
    admitAndCreate(member("flaky", "flaky-a", "2", "1"), "flaky", 1);
    admitAndCreate(member("flaky", "flaky-b", "2", "1"), "flaky", 2);

    var failed = client.pods().inNamespace("default").withName("flaky-b").get();
    failed.setStatus(new PodStatusBuilder().withPhase("Failed").build());
    client.resource(failed).updateStatus();
    await().atMost(Duration.ofSeconds(5)).until(() -> cluster.gangPods("default", "flaky").size() == 1);

    assertThat(allowed(validate(member("flaky", "flaky-c", "2", "1")))).isTrue();
  }

  @Test
  void mpiLauncherCarryingTheGangLabelsIsNoMember() {
    admitAndCreate(member("horovod", "horovod-worker-0", "2", "1"), "horovod", 1);
    admitAndCreate(member("horovod", "horovod-worker-1", "2", "1"), "horovod", 2);
    var launcher = member("horovod", "horovod-launcher-x7k2p", "2", "1");
    ((ObjectNode) launcher.at("/metadata/labels")).put("training.kubeflow.org/job-role", "launcher");
    ((ObjectNode) launcher.at("/spec/containers/0/resources")).putObject("limits").put("cpu", "1");

    assertThat(allowed(validate(launcher))).isTrue();
  }

  @Test
  void podOfTheNextReplicaSetOfTheSameDeploymentIsARolloutOfOneWorkloadNotACollision() {
    admitAndCreate(ofReplicaSet(member("dep", "dep-aaa-1", "2", "1"), "dep", "aaa"), "dep", 1);
    admitAndCreate(ofReplicaSet(member("dep", "dep-aaa-2", "2", "1"), "dep", "aaa"), "dep", 2);

    // A rolling update's surge: the gang is full of the old revision.
    assertThat(message(validate(ofReplicaSet(member("dep", "dep-bbb-1", "2", "1"), "dep", "bbb"))))
        .isEqualTo(
            "Pod \"dep-bbb-1\": gang \"dep\": pods of ReplicaSet \"dep-aaa\" (another revision of Deployment \"dep\", member"
                + " dep-aaa-1) are still running and the gang declares gpu-topology-replica \"2\"; this pod would be member 3:"
                + " a gpu-topology Deployment must use strategy.type: Recreate so that old members are gone before new ones start");

    // One old member gone: the new revision's pod joins the same workload's gang.
    client.pods().inNamespace("default").withName("dep-aaa-2").delete();
    await().atMost(Duration.ofSeconds(5)).until(() -> cluster.gangPods("default", "dep").size() == 1);
    assertThat(allowed(validate(ofReplicaSet(member("dep", "dep-bbb-1", "2", "1"), "dep", "bbb")))).isTrue();
  }

  @Test
  void customJobLabelIsFollowedByTheGangChecksAndTheWebhookCondition() {
    client.resource(
            new ConfigMapBuilder()
                .withNewMetadata().withName("gpu-admission-policy").withNamespace("gpu-admission").endMetadata()
                .addToData("policy.yaml", "topology:\n  jobLabel: " + CUSTOM_LABEL + "\n")
                .build())
        .create();
    await().atMost(Duration.ofSeconds(10)).until(() -> gangPods.jobLabel().orElse("").equals(CUSTOM_LABEL) && gangPods.synced());

    var first = member("bert", "bert-0", "2", "1");
    var labels = (ObjectNode) first.at("/metadata/labels");
    labels.remove("gpu-topology");
    labels.put(CUSTOM_LABEL, "bert");
    // Created directly, long ago as far as this replica knows: only the informer can tell of it.
    client.resource(KubernetesJson.mapper().convertValue(first, Pod.class)).create();
    await().atMost(Duration.ofSeconds(5)).until(() -> cluster.gangPods("default", "bert").size() == 1);
    var second = first.deepCopy();
    ((ObjectNode) second.path("metadata")).put("name", "bert-1");
    ((ObjectNode) second.at("/spec/containers/0/resources/limits")).put("aliyun.com/gpu", "2");

    assertThat(message(validate(second)))
        .isEqualTo(
            "Pod \"bert-1\": gang \"bert\": pod asks aliyun.com/gpu=2 but member bert-0 asks 1; all pods of a gpu-topology"
                + " job must request the same resources");
    await().atMost(Duration.ofSeconds(10)).until(() -> podsValidateCondition().endsWith("'" + CUSTOM_LABEL + "' in object.metadata.labels)"));

    client.configMaps().inNamespace("gpu-admission").withName("gpu-admission-policy").delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> podsValidateCondition().endsWith("'gpu-topology' in object.metadata.labels)"));
  }

  @Test
  void changedNodeLabelsAreReadOnEveryNodeAtOnce() {
    assertThat(nodes.models().isEmpty()).isFalse();
    client.resource(
            new ConfigMapBuilder()
                .withNewMetadata().withName("gpu-admission-policy").withNamespace("gpu-admission").endMetadata()
                .addToData("policy.yaml", "nodeLabels:\n  model: example.com/gpu-model\n")
                .build())
        .create();

    // No fixture node carries the new model label, and none of them changed.
    await().atMost(Duration.ofSeconds(10)).until(() -> nodes.models().isEmpty());
  }

  @Test
  void judgesAWorkloadUpdateOnlyWhenItsSpecChanges() {
    var before = (ObjectNode) Fixtures.yamlTree(Fixtures.path("workloads/deployment-topology-rolling-update.yaml"));
    var annotated = before.deepCopy();
    ((ObjectNode) annotated.path("metadata")).putObject("annotations").put("deployment.kubernetes.io/revision", "2");
    var rescaled = before.deepCopy();
    ((ObjectNode) rescaled.path("spec")).put("replicas", 3);

    // A Deployment admitted before the webhook: its controller's own metadata updates still pass.
    assertThat(allowed(post(Reviews.update("u-dep-meta", before, annotated)))).isTrue();
    assertThat(message(post(Reviews.update("u-dep-spec", before, rescaled))))
        .isEqualTo(
            "Deployment \"bert-serve\": gpu-topology-replica is \"2\" but the Deployment makes 3 pods; set"
                + " gpu-topology-replica: \"3\"");
  }

  private String podsValidateCondition() {
    var config = client.admissionRegistration().v1().validatingWebhookConfigurations().withName("gpu-admission").get();
    return config.getWebhooks().stream()
        .filter(w -> w.getName().equals("pods.validate.gpu-admission.io"))
        .flatMap(w -> w.getMatchConditions().stream())
        .filter(c -> c.getName().equals("gpu-or-topology-pod"))
        .findFirst().orElseThrow().getExpression();
  }
}
