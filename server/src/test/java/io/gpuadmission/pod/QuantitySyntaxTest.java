package io.gpuadmission.pod;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

/** The pod's quantities are judged and read with apimachinery's grammar, as kube-apiserver reads them. */
class QuantitySyntaxTest {
  private static Pod pod(String limits) {
    return new KubernetesSerialization().unmarshal("""
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
         "spec": {"containers": [{"name": "c", "resources": {"limits": %s}}]}}""".formatted(limits), Pod.class);
  }

  @Test
  void acceptsAndReadsWhatKubeApiserverAccepts() {
    var pod = pod("{\"aliyun.com/gpu\": \" 2 \", \"cpu\": \"-\", \"memory\": \"Ki\", \"aliyun.com/gpu-mem\": \"1e+1\"}");

    assertThat(QuantitySyntax.problem(pod)).isEmpty();
    var container = pod.getSpec().getContainers().getFirst();
    assertThat(PodResources.amount(container, "aliyun.com/gpu")).isEqualByComparingTo("2");
    assertThat(PodResources.amount(container, "memory")).isEqualByComparingTo(BigDecimal.ZERO);
    assertThat(PodResources.amount(container, "aliyun.com/gpu-mem")).isEqualByComparingTo("10");
    var huge = pod("{\"aliyun.com/gpu\": \"1e2000000000\"}").getSpec().getContainers().getFirst();
    assertThat(PodResources.amount(huge, "aliyun.com/gpu")).isEqualByComparingTo(Long.toString(Long.MAX_VALUE));
  }

  @Test
  void refusesWhatKubeApiserverRefusesNamingWhere() {
    assertThat(QuantitySyntax.problem(pod("{\"cpu\": \"2\", \"aliyun.com/gpu\": \"1.1.M\"}"))).contains("container \"c\": resources.limits"
        + "[\"aliyun.com/gpu\"] is \"1.1.M\", not a quantity (a quantity is a number with an optional suffix, such as 2, 500m, 16Gi or 1e3)");
    assertThat(QuantitySyntax.problem(pod("{\"memory\": \"1KiB\"}"))).isPresent();
  }
}
