package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
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
