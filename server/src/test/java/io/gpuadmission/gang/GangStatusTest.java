package io.gpuadmission.gang;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A gang's status from its members alone: who is missing, who disagrees, how many per node. */
class GangStatusTest {
  private static Pod template() {
    return KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("gang/bert-worker.yaml")), Pod.class);
  }

  private static GangMember member(int index, String replicas, int gpus) {
    var pod = new PodBuilder(template()).editMetadata().withName("bert-worker-" + index).withUid("uid-" + index)
        .addToLabels("gpu-topology-replica", replicas).endMetadata()
        .editSpec().editFirstContainer().editResources().addToLimits("aliyun.com/gpu", new Quantity(Integer.toString(gpus))).endResources()
        .endContainer().endSpec().build();
    return GangMember.of(pod, PolicyParser.builtInDefault()).orElseThrow();
  }

  @Test
  void countsMembersAgainstTheReplicaLabel() {
    assertThat(GangStatus.of(List.of(member(0, "3", 2), member(1, "3", 2)), "gpu-topology-replica"))
        .isEqualTo(new GangStatus.Waiting(2, 3));
    var complete = (GangStatus.Complete) GangStatus.of(List.of(member(1, "2", 2), member(0, "2", 2)), "gpu-topology-replica");
    assertThat(complete.unbound()).extracting(GangMember::name).containsExactly("bert-worker-0", "bert-worker-1");
    assertThat(complete.gpusEach()).isEqualTo(2);
    // The fixture runs on the host network without ports: members may share a node.
    assertThat(complete.perNode()).isEqualTo(2);
  }

  @Test
  void membersThatDisagreeOrOverflowAreNamed() {
    assertThat(GangStatus.of(List.of(member(0, "2", 2), member(1, "3", 2), member(2, "2", 2)), "gpu-topology-replica"))
        .isEqualTo(new GangStatus.Disagreeing("members disagree on gpu-topology-replica: \"2\" (bert-worker-0, bert-worker-2), \"3\" (bert-worker-1)"));
    assertThat(GangStatus.of(List.of(member(0, "2", 2), member(1, "2", 4)), "gpu-topology-replica"))
        .isEqualTo(new GangStatus.Disagreeing("members ask for different numbers of whole GPUs: 2 (bert-worker-0), 4 (bert-worker-1)"));
    assertThat(GangStatus.of(List.of(member(0, "2", 2), member(1, "2", 2), member(2, "2", 2)), "gpu-topology-replica"))
        .isEqualTo(new GangStatus.Disagreeing("3 members exist for gpu-topology-replica \"2\": bert-worker-0, bert-worker-1, bert-worker-2"));
    assertThat(GangStatus.of(List.of(member(0, "two", 2)), "gpu-topology-replica"))
        .isEqualTo(new GangStatus.Disagreeing("gpu-topology-replica is \"two\", not a positive number of members"));
  }

  @Test
  void membersOnTheHostNetworkWithPortsGetOneNodeEach() {
    var pod = new PodBuilder(template()).editMetadata().withUid("uid-p").endMetadata()
        .editSpec().editFirstContainer().addNewPort().withContainerPort(23456).withName("pytorchjob-port").endPort().endContainer().endSpec().build();
    var withPort = GangMember.of(pod, PolicyParser.builtInDefault()).orElseThrow();
    assertThat(withPort.hostPorts()).containsExactly(23456);
    var complete = new GangStatus.Complete(4, 2, List.of(), List.of(withPort, member(1, "4", 2), member(2, "4", 2), member(3, "4", 2)));
    assertThat(complete.perNode()).isEqualTo(1);
  }

  @Test
  void aJobOfOneReplicaOrOfArenasUncountedReplicasIsNoGang() {
    var single = new PodBuilder(template()).editMetadata().addToLabels("gpu-topology-replica", "1").endMetadata().build();
    assertThat(GangMember.of(single, PolicyParser.builtInDefault())).isEmpty();
    var arena = new PodBuilder(template()).editMetadata().addToLabels("gpu-topology", "true").addToLabels("gpu-topology-replica", "true").endMetadata().build();
    assertThat(GangMember.of(arena, PolicyParser.builtInDefault())).isEmpty();
  }
}
