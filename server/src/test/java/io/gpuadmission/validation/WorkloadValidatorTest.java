package io.gpuadmission.validation;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterView;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.mutation.PodMutator;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

class WorkloadValidatorTest {
  private final WorkloadValidator validator =
      new WorkloadValidator(new PodMutator(PodMutator.standardRules(), KubernetesJson.mapper()), KubernetesJson.mapper());

  private ValidationResult validate(String fixture, WorkloadKind kind) {
    var object = Fixtures.yamlTree(Fixtures.path("workloads/" + fixture));
    return validator.validate(
        kind, object, "default", PolicyParser.builtInDefault(), ClusterView.EMPTY, GpuModelCatalog.EMPTY);
  }

  @Test
  void allowsConsistentPyTorchJobAndSaysWhatEachPodWillGet() {
    var result = validate("pytorchjob-consistent.yaml", WorkloadKind.PYTORCH_JOB);

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings())
        .containsExactly(
            "gpu-admission: Master pods will get: topology job \"pytorch-dist-nccl\": nodeSelector ack.node.gpu.schedule=topology",
            "gpu-admission: no GPU nodes known yet; could not check that Master pods fit a node",
            "gpu-admission: Worker pods will get: topology job \"pytorch-dist-nccl\": nodeSelector ack.node.gpu.schedule=topology",
            "gpu-admission: no GPU nodes known yet; could not check that Worker pods fit a node");
  }

  @Test
  void deniesPyTorchJobWhoseWorkerAsksMoreGpusThanMaster() {
    var result = validate("pytorchjob-worker-2-gpus.yaml", WorkloadKind.PYTORCH_JOB);

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "Worker asks aliyun.com/gpu=2 but Master asks 1; all replicas of a gpu-topology job must request the same resources");
  }

  @Test
  void deniesPyTorchJobDeclaringMoreReplicasThanItHas() {
    var result = validate("pytorchjob-replica-3.yaml", WorkloadKind.PYTORCH_JOB);

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "gpu-topology-replica is \"3\" but the job makes 2 pods (Master 1 + Worker 1); set gpu-topology-replica: \"2\"");
  }

  @Test
  void allowsJobWithOnlyLabelsAndListsTheMutationsItsPodsWillReceive() {
    var result = validate("pytorchjob-labels-only.yaml", WorkloadKind.PYTORCH_JOB);

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings())
        .contains(
            "gpu-admission: Worker pods will get: topology job \"pytorch-dist-nccl\": moved nvidia.com/gpu to aliyun.com/gpu;"
                + " set hostIPC, hostNetwork, hostPID; dnsPolicy ClusterFirstWithHostNet; nodeSelector ack.node.gpu.schedule=topology");
  }

  @Test
  void deniesStatefulSetWhoseReplicaLabelDiffersFromReplicas() {
    var result = validate("statefulset-topology-replica-mismatch.yaml", WorkloadKind.STATEFUL_SET);

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "gpu-topology-replica is \"4\" but the StatefulSet makes 3 pods; set gpu-topology-replica: \"3\"");
  }

  @Test
  void deniesContainerAskingWholeGpusAndMemoryShare() {
    var result = validate("deployment-mixed-gpu-resources.yaml", WorkloadKind.DEPLOYMENT);

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "container \"server\" asks both nvidia.com/gpu and aliyun.com/gpu-mem; a container gets whole GPUs or a"
                + " share of one GPU's memory, not both: remove one of them");
  }

  @Test
  void deniesGangDeploymentThatWouldRollOutOldAndNewMembersAtOnce() {
    var result = validate("deployment-topology-rolling-update.yaml", WorkloadKind.DEPLOYMENT);

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "a gpu-topology Deployment must use strategy.type: Recreate (it has RollingUpdate); a rolling update runs pods"
                + " of the old and the new ReplicaSet at once under one gpu-topology value, more members than"
                + " gpu-topology-replica declares, and the gang never starts");
  }

  @Test
  void allowsGangDeploymentThatRecreatesItsPods() {
    assertThat(validate("deployment-topology-recreate.yaml", WorkloadKind.DEPLOYMENT).violations()).isEmpty();
  }

  @Test
  void allowsGangWorkloadsScaledToZero() {
    assertThat(validate("deployment-topology-scaled-to-zero.yaml", WorkloadKind.DEPLOYMENT).violations()).isEmpty();
    assertThat(validate("statefulset-topology-scaled-to-zero.yaml", WorkloadKind.STATEFUL_SET).violations()).isEmpty();
  }

  @Test
  void countsAJobsPodsAsTheSmallerOfParallelismAndCompletions() {
    assertThat(validate("job-topology-completions.yaml", WorkloadKind.JOB).violations()).isEmpty();
    assertThat(validate("job-topology-completions-declares-parallelism.yaml", WorkloadKind.JOB).violations())
        .extracting(Violation::message)
        .containsExactly("gpu-topology-replica is \"4\" but the Job makes 2 pods; set gpu-topology-replica: \"2\"");
  }

  @Test
  void deniesGangCronJobWhoseRunsMayOverlap() {
    assertThat(validate("cronjob-topology-overlapping.yaml", WorkloadKind.CRON_JOB).violations())
        .extracting(Violation::message)
        .containsExactly(
            "a gpu-topology CronJob must set concurrencyPolicy: Forbid or Replace (it has Allow); with Allow two runs can"
                + " overlap under one gpu-topology value and neither gang can start");
    assertThat(validate("cronjob-topology-forbid.yaml", WorkloadKind.CRON_JOB).violations()).isEmpty();
  }

  @Test
  void deniesElasticPyTorchJobDeclaringAFixedGang() {
    assertThat(validate("pytorchjob-elastic.yaml", WorkloadKind.PYTORCH_JOB).violations())
        .extracting(Violation::message)
        .containsExactly(
            "an elastic PyTorchJob (elasticPolicy minReplicas 1, maxReplicas 4, Worker replicas 3) can change its number"
                + " of Workers, but a gpu-topology gang has the fixed size gpu-topology-replica declares; remove"
                + " elasticPolicy or the gpu-topology labels, or set minReplicas and maxReplicas to the Worker replicas");
  }

  @Test
  void leavesTheMpiLauncherOutOfTheGangAndOffTheTopologyPool() {
    var result = validate("mpijob-launcher-cpu-only.yaml", WorkloadKind.MPI_JOB);

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings())
        .containsExactly(
            "gpu-admission: Launcher pods will get: node affinity aliyun.accelerator/nvidia_name DoesNotExist (pod asks for no GPU)",
            "gpu-admission: Worker pods will get: topology job \"horovod-resnet\": moved nvidia.com/gpu to aliyun.com/gpu;"
                + " set hostIPC, hostNetwork, hostPID; dnsPolicy ClusterFirstWithHostNet; nodeSelector ack.node.gpu.schedule=topology",
            "gpu-admission: no GPU nodes known yet; could not check that Worker pods fit a node");
  }

  @Test
  void deniesTopologyTemplateThatSharesItsProcessNamespace() {
    assertThat(validate("pytorchjob-share-process-namespace.yaml", WorkloadKind.PYTORCH_JOB).violations())
        .extracting(Violation::message)
        .containsExactly(
            "Worker: gpu-topology job \"traced-bert\" needs hostPID, but the pod sets shareProcessNamespace: true, which"
                + " the API server refuses together with hostPID; remove that setting from the pod (or the platform team"
                + " sets policy topology.onConflict: skip to run such pods without it)");
  }

  @Test
  void admitsTopologyTemplateWithoutTheConflictingSettingWhenPolicySaysSkip() throws Exception {
    var policy = PolicyParser.parse("topology:\n  onConflict: skip\n");
    var object = Fixtures.yamlTree(Fixtures.path("workloads/pytorchjob-share-process-namespace.yaml"));

    var result = validator.validate(WorkloadKind.PYTORCH_JOB, object, "default", policy, ClusterView.EMPTY, GpuModelCatalog.EMPTY);

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings())
        .contains(
            "gpu-admission: Worker pods will get: topology job \"traced-bert\": left hostPID unset: the pod sets"
                + " shareProcessNamespace: true, which the API server refuses together with hostPID");
  }

  @Test
  void deniesChangingTheResourcesOfARunningStatefulSetGangPodByPod() {
    var before = (com.fasterxml.jackson.databind.node.ObjectNode) Fixtures.yamlTree(Fixtures.path("workloads/statefulset-topology-scaled-to-zero.yaml"));
    ((com.fasterxml.jackson.databind.node.ObjectNode) before.path("spec")).put("replicas", 3);
    var after = before.deepCopy();
    ((com.fasterxml.jackson.databind.node.ObjectNode) after.at("/spec/template/spec/containers/0/resources/limits")).put("nvidia.com/gpu", 4);
    var scaledDown = after.deepCopy();
    ((com.fasterxml.jackson.databind.node.ObjectNode) scaledDown.path("spec")).put("replicas", 0);

    var policy = PolicyParser.builtInDefault();
    assertThat(validator.validate(WorkloadKind.STATEFUL_SET, after, before, "default", policy, ClusterView.EMPTY, GpuModelCatalog.EMPTY).violations())
        .extracting(Violation::message)
        .containsExactly(
            "changing the resources of a running gpu-topology StatefulSet would replace or add its pods one at a time, and"
                + " each new pod would disagree with the members still running; scale it to 0, apply the change, then scale"
                + " it back (or use updateStrategy OnDelete and delete all its pods)");
    assertThat(validator.validate(WorkloadKind.STATEFUL_SET, scaledDown, before, "default", policy, ClusterView.EMPTY, GpuModelCatalog.EMPTY).violations())
        .isEmpty();
  }

  private ValidationResult update(WorkloadKind kind, JsonNode before, JsonNode after) {
    return validator.validate(kind, after, before, "default", PolicyParser.builtInDefault(), ClusterView.EMPTY, GpuModelCatalog.EMPTY);
  }

  private static ObjectNode tree(String fixture) {
    return (ObjectNode) Fixtures.yamlTree(Fixtures.path("workloads/" + fixture));
  }

  @Test
  void deniesResizingARunningStatefulSetGangPodByPod() {
    var before = tree("statefulset-topology-scaled-to-zero.yaml");
    ((ObjectNode) before.path("spec")).put("replicas", 3);
    var after = before.deepCopy();
    ((ObjectNode) after.path("spec")).put("replicas", 4);
    ((ObjectNode) after.at("/spec/template/metadata/labels")).put("gpu-topology-replica", "4");

    assertThat(update(WorkloadKind.STATEFUL_SET, before, after).violations())
        .extracting(Violation::message)
        .containsExactly(
            "changing label gpu-topology-replica of a running gpu-topology StatefulSet would replace or add its pods one"
                + " at a time, and each new pod would disagree with the members still running; scale it to 0, apply the"
                + " change, then scale it back (or use updateStrategy OnDelete and delete all its pods)");
  }

  @Test
  void alwaysAllowsScalingAGangDeploymentToZero() {
    var running = tree("deployment-topology-rolling-update.yaml");
    var scaledDown = running.deepCopy();
    ((ObjectNode) scaledDown.path("spec")).put("replicas", 0);

    assertThat(update(WorkloadKind.DEPLOYMENT, running, scaledDown).violations()).isEmpty();
  }

  @Test
  void tellsThatAnExistingJobMustBeRecreatedToChangeItsGang() {
    var before = tree("job-topology-completions.yaml");
    var after = before.deepCopy();
    ((ObjectNode) after.path("spec")).put("parallelism", 3).put("completions", 3);

    assertThat(update(WorkloadKind.JOB, before, after).violations())
        .extracting(Violation::message)
        .containsExactly(
            "gpu-topology-replica is \"2\" but the Job makes 3 pods; set gpu-topology-replica: \"3\"; a Job's pod"
                + " template cannot change: delete the Job and create it again with the change");
  }

  @Test
  void countsAnMpiLauncherThatRunsAsAWorker() {
    var result = validate("mpijob-launcher-as-worker.yaml", WorkloadKind.MPI_JOB);

    assertThat(result.violations()).isEmpty();
    assertThat(result.warnings())
        .contains(
            "gpu-admission: Launcher pods will get: topology job \"horovod-bert\": moved nvidia.com/gpu to aliyun.com/gpu;"
                + " set hostIPC, hostNetwork, hostPID; dnsPolicy ClusterFirstWithHostNet; nodeSelector ack.node.gpu.schedule=topology");
  }

  @Test
  void allowsAPyTorchJobWhoseElasticPolicyOnlySetsTheRendezvous() {
    assertThat(validate("pytorchjob-elastic-fixed-size.yaml", WorkloadKind.PYTORCH_JOB).violations()).isEmpty();
  }

  @Test
  void tellsThatAReplicaTypeWithoutGpusIsNoGangMember() {
    assertThat(validate("tfjob-ps-without-gpu.yaml", WorkloadKind.TF_JOB).violations())
        .extracting(Violation::message)
        .containsExactly(
            "PS carries the gpu-topology labels but asks for no GPU; only the replicas with GPUs form a topology gang:"
                + " remove the gpu-topology and gpu-topology-replica labels from PS");
  }

  @Test
  void judgesATemplateWithoutSpecWithoutFailing() {
    var job = tree("pytorchjob-labels-only.yaml");
    ((ObjectNode) job.at("/spec/pytorchReplicaSpecs/Worker/template")).remove("spec");

    var result = validate(job);

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "Worker carries the gpu-topology labels but asks for no GPU; only the replicas with GPUs form a topology gang:"
                + " remove the gpu-topology and gpu-topology-replica labels from Worker");
  }

  private ValidationResult validate(JsonNode object) {
    return validator.validate(WorkloadKind.PYTORCH_JOB, object, "default", PolicyParser.builtInDefault(), ClusterView.EMPTY, GpuModelCatalog.EMPTY);
  }

  @Test
  void judgesTheRolloutStrategyOfAGangDeploymentCreatedAtZeroReplicas() {
    var atZero = tree("deployment-topology-rolling-update.yaml");
    ((ObjectNode) atZero.path("spec")).put("replicas", 0);

    // kubectl scale goes through the scale subresource, which this webhook never sees.
    assertThat(validate(atZero, WorkloadKind.DEPLOYMENT).violations()).extracting(Violation::rule).containsExactly("gang-lifecycle");
  }

  @Test
  void deniesAnElasticPolicyWhoseOneBoundDiffersFromTheWorkers() {
    var job = tree("pytorchjob-elastic.yaml");
    ((ObjectNode) job.at("/spec/elasticPolicy")).remove("minReplicas");

    assertThat(validate(job).violations())
        .extracting(Violation::message)
        .containsExactly(
            "an elastic PyTorchJob (elasticPolicy minReplicas 4, maxReplicas 4, Worker replicas 3) can change its number"
                + " of Workers, but a gpu-topology gang has the fixed size gpu-topology-replica declares; remove"
                + " elasticPolicy or the gpu-topology labels, or set minReplicas and maxReplicas to the Worker replicas");
  }

  private ValidationResult validate(JsonNode object, WorkloadKind kind) {
    return validator.validate(kind, object, "default", PolicyParser.builtInDefault(), ClusterView.EMPTY, GpuModelCatalog.EMPTY);
  }
}
