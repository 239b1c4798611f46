package io.gpuadmission.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.admission.KubernetesJson;
import org.junit.jupiter.api.Test;

/** JSON Patch operations as people read them. */
class ReadablePatchTest {
  @Test
  void pointersBecomeFieldPaths() {
    assertThat(ReadablePatch.path("/spec/containers/0/resources/limits/nvidia.com~1gpu")).isEqualTo("spec.containers[0].resources.limits[\"nvidia.com/gpu\"]");
    assertThat(ReadablePatch.path("/metadata/annotations/gpu-admission.io~1mutated")).isEqualTo("metadata.annotations[\"gpu-admission.io/mutated\"]");
    assertThat(ReadablePatch.path("/spec/tolerations/-")).isEqualTo("spec.tolerations[-]");
    assertThat(ReadablePatch.path("/metadata/labels/a~0b")).isEqualTo("metadata.labels[\"a~b\"]");
  }

  @Test
  void operationsAreAlignedWithTheirValuesAsJson() throws Exception {
    var patch =
        KubernetesJson.mapper()
            .readTree(
                """
                [{"op": "remove", "path": "/spec/containers/0/resources/limits/nvidia.com~1gpu"},
                 {"op": "add", "path": "/spec/hostIPC", "value": true},
                 {"op": "replace", "path": "/spec/dnsPolicy", "value": "ClusterFirstWithHostNet"}]
                """);

    assertThat(ReadablePatch.lines(patch, "  "))
        .containsExactly(
            "  remove   spec.containers[0].resources.limits[\"nvidia.com/gpu\"]",
            "  add      spec.hostIPC                                           true",
            "  replace  spec.dnsPolicy                                         \"ClusterFirstWithHostNet\"");
  }
}
