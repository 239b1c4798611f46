package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.placement.HeldRoom;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BoundPodsTest {
  @Test
  void strippedPodKeepsWhatTheLedgerReadsAndNothingElse() {
    var list = Fixtures.yamlTree(Fixtures.path("extender/bound-pods.yaml")).path("items").get(0);
    var pod = KubernetesJson.mapper().convertValue(list, Pod.class);
    pod.getMetadata().getAnnotations().put("kubectl.kubernetes.io/last-applied-configuration", "{...}");

    var stripped = BoundPods.strip(pod, PolicyParser.builtInDefault());

    assertThat(stripped.getMetadata().getAnnotations()).doesNotContainKey("kubectl.kubernetes.io/last-applied-configuration").hasSize(5);
    assertThat(stripped.getSpec().getContainers().get(0).getImage()).isNull();
    assertThat(stripped.getSpec().getContainers().get(0).getResources().getLimits()).containsOnlyKeys("aliyun.com/gpu-mem");
    assertThat(PodClaims.claimOf(stripped)).isEqualTo(PodClaims.claimOf(pod));
    assertThat(BoundPods.isGpuPod(stripped, PolicyParser.builtInDefault())).isTrue();
    assertThat(Map.of("phase", stripped.getStatus().getPhase())).containsEntry("phase", "Running");
  }

  /**
   * A pending share pod keeps kube-scheduler's PodScheduled condition, the room reclaim holds for
   * it and its node selection (quota reclaim looks for the pods kube-scheduler could not place, and
   * where they may go); once bound it keeps none of them.
   */
  @Test
  void aPendingPodKeepsItsPodScheduledConditionAndNodeSelectionABoundOneNeither() {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/pod-share.yaml")), Pod.class);
    pod.getSpec().setNodeSelector(Map.of("ack.node.gpu.schedule", "cgpu"));
    pod.getSpec().setTolerations(java.util.List.of(new io.fabric8.kubernetes.api.model.TolerationBuilder().withKey("gpu").withOperator("Exists").build()));
    pod.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Pending")
        .addNewCondition().withType("PodScheduled").withStatus("False").withReason("Unschedulable").withMessage("0/3 nodes are available").endCondition()
        .addNewCondition().withType("Ready").withStatus("False").endCondition()
        .addNewCondition().withType("gpu-admission.io/ReclaimedRoom").withStatus("True").withReason("QuotaReclaim")
        .withMessage("quota reclaim holds the GPUs it freed on node share-q for this pod until 2026-12-02T17:00:00Z").endCondition().build());

    var pending = BoundPods.strip(pod, PolicyParser.builtInDefault());
    pod.getSpec().setNodeName("share-q");
    var bound = BoundPods.strip(pod, PolicyParser.builtInDefault());

    assertThat(pending.getStatus().getConditions()).extracting(c -> c.getType() + " " + c.getStatus() + " " + c.getReason())
        .containsExactly("PodScheduled False Unschedulable", "gpu-admission.io/ReclaimedRoom True QuotaReclaim");
    assertThat(HeldRoom.of(pending)).contains(new HeldRoom("share-q", Instant.parse("2026-12-02T17:00:00Z")));
    assertThat(pending.getSpec().getNodeSelector()).isEqualTo(Map.of("ack.node.gpu.schedule", "cgpu"));
    assertThat(pending.getSpec().getTolerations()).extracting(t -> t.getKey()).containsExactly("gpu");
    assertThat(bound.getStatus().getConditions()).isNullOrEmpty();
    assertThat(bound.getSpec().getNodeSelector()).isNullOrEmpty();
    assertThat(bound.getSpec().getTolerations()).isNullOrEmpty();
  }

  @Test
  void aPodWhoseGpuAskIsInAnInitContainerStaysAGpuPodWhenStripped() {
    var initOnly = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("placement/pod-init-only-share-5g.yaml")), Pod.class);
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("placement/pod-share-sidecars.yaml")), Pod.class);

    var stripped = BoundPods.strip(pod, PolicyParser.builtInDefault());

    assertThat(BoundPods.isGpuPod(BoundPods.strip(initOnly, PolicyParser.builtInDefault()), PolicyParser.builtInDefault())).isTrue();
    assertThat(stripped.getSpec().getInitContainers())
        .extracting(c -> c.getName() + "/" + c.getRestartPolicy() + "/" + c.getResources().getLimits().get("aliyun.com/gpu-mem") + "/" + c.getImage())
        .containsExactly("metrics/Always/2/null", "quantize/null/6/null", "cache/Always/1/null", "verify/null/3/null");
  }
}
