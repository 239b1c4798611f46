package io.gpuadmission.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A pod as the agent's watch brings it, stripped to what the agent keeps. */
class NodePodTest {
  @Test
  void keepsIdentityTheGpuAnnotationsAndEachContainersGpus() throws Exception {
    var json = io.gpuadmission.node.api.Json.read("""
        {"metadata": {"name": "bert-worker-0", "namespace": "ml-team-a", "uid": "u-1", "resourceVersion": "42",
                      "creationTimestamp": "2026-11-27T01:02:03Z", "deletionTimestamp": "2026-11-27T01:05:00Z",
                      "labels": {"app": "bert"},
                      "annotations": {"gpu-admission.io/gpu-indices": "0,3", "gpu-admission.io/container-gpus": "prep=0;trainer=0,3",
                                      "kubectl.kubernetes.io/last-applied-configuration": "{...}"}},
         "spec": {"nodeName": "gpu-1",
                  "initContainers": [{"name": "prep", "image": "busybox", "resources": {"limits": {"aliyun.com/gpu": "1"}}},
                                     {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}}],
                  "containers": [{"name": "trainer", "resources": {"limits": {"aliyun.com/gpu": "2", "memory": "1Gi"},
                                                                  "requests": {"aliyun.com/gpu": "2"}}},
                                 {"name": "sidecar"}]},
         "status": {"phase": "Pending", "conditions": []}}
        """);

    var pod = NodePod.of(json);

    assertThat(pod.key()).isEqualTo("ml-team-a/bert-worker-0");
    assertThat(pod.uid()).isEqualTo("u-1");
    assertThat(pod.node()).isEqualTo("gpu-1");
    assertThat(pod.annotations()).isEqualTo(Map.of("gpu-admission.io/gpu-indices", "0,3", "gpu-admission.io/container-gpus", "prep=0;trainer=0,3"));
    assertThat(pod.created()).isEqualTo(Instant.parse("2026-11-27T01:02:03Z"));
    assertThat(pod.deleting()).isTrue();
    assertThat(pod.finished()).isFalse();
    assertThat(pod.initContainers()).extracting(NodePod.Container::name).containsExactly("prep", "proxy");
    assertThat(pod.initContainers()).extracting(NodePod.Container::sidecar).containsExactly(false, true);
    assertThat(pod.initContainers().getFirst().amount("aliyun.com/gpu")).isEqualTo(1);
    assertThat(pod.containers()).extracting(c -> c.amount("aliyun.com/gpu")).containsExactly(2, 0);
    assertThat(pod.containers().getFirst().limits()).containsEntry("memory", new BigDecimal(1L << 30));
  }

  @Test
  void aPodWithoutSpecOrStatusIsStillReadable() throws Exception {
    var pod = NodePod.of(io.gpuadmission.node.api.Json.read("{\"metadata\": {\"name\": \"a\", \"namespace\": \"b\"}}"));

    assertThat(pod.node()).isNull();
    assertThat(pod.containers()).isEmpty();
    assertThat(pod.created()).isEqualTo(Instant.EPOCH);
    assertThat(pod.annotations()).isEmpty();
  }

  @Test
  void amountsAreReadWithApimachinerysGrammarAndCapped() throws Exception {
    var pod = NodePod.of(io.gpuadmission.node.api.Json.read("""
        {"metadata": {"name": "a", "namespace": "b"}, "spec": {"containers": [
          {"name": "c", "resources": {"limits": {"aliyun.com/gpu": " 2 ", "nvidia.com/gpu": "1e99", "memory": "lots", "cpu": "1.G"}}}]}}"""));

    var container = pod.containers().getFirst();
    assertThat(container.amount("aliyun.com/gpu")).isEqualTo(2);
    assertThat(container.amount("nvidia.com/gpu")).isEqualTo(Integer.MAX_VALUE);
    assertThat(container.limits()).doesNotContainKey("memory").containsEntry("cpu", new BigDecimal("1E+9"));
  }
}
