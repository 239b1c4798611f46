package io.gpuadmission.pod;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import org.junit.jupiter.api.Test;

class TopologyJobTest {
  private static Pod launcher() {
    return KubernetesJson.mapper().convertValue(Fixtures.podJson(Fixtures.path("mutation/mpijob-launcher-pod/pod.yaml")), Pod.class);
  }

  @Test
  void mpiOperatorV1LauncherWithoutGpusIsNoMember() {
    var pod = launcher();
    pod.getMetadata().getLabels().remove("training.kubeflow.org/job-role");
    pod.getMetadata().getLabels().put("mpi-job-role", "launcher");

    assertThat(TopologyJob.of(pod, PolicyParser.builtInDefault().topology())).isEmpty();
  }

  @Test
  void launcherAskingWholeGpusRunsAsAWorkerAndIsAMember() {
    var pod = launcher();
    pod.getSpec().getContainers().get(0).getResources().getLimits().put("nvidia.com/gpu", new Quantity("1"));

    assertThat(TopologyJob.of(pod, PolicyParser.builtInDefault().topology()))
        .contains(new TopologyJob("horovod-resnet", "2", "horovod-resnet"));
  }

  @Test
  void arenaJobWhoseControllerReferenceHasNoNameIsNamedAfterThePod() {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.podJson(Fixtures.path("mutation/arena-topology-pod/pod.yaml")), Pod.class);
    pod.getMetadata().getOwnerReferences().get(0).setName(null);
    var job = TopologyJob.of(pod, PolicyParser.builtInDefault().topology()).orElseThrow();

    assertThat(job.displayName()).isEqualTo(pod.getMetadata().getName());
    assertThat(GangKey.of("default", pod, job).displayName()).isEqualTo(pod.getMetadata().getName());
  }
}
