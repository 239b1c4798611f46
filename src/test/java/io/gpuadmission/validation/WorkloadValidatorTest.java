package io.gpuadmission.validation;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.mutation.PodMutator;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
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
            "gpu-topology-replica is \"4\" but the StatefulSet makes 3 pods (3); set gpu-topology-replica: \"3\"");
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
}
