package io.gpuadmission.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each container's part of a pod's whole GPUs, as the kubelet hands them out. */
class ContainerGpusTest {
  /** A container asking {@code gpus} whole GPUs; {@code restartPolicy} "Always" makes an init container a sidecar. */
  static ContainerGpus.Slot c(String name, int gpus, String restartPolicy) {
    return new ContainerGpus.Slot(name, "Always".equals(restartPolicy), gpus);
  }

  record Pod(List<ContainerGpus.Slot> init, List<ContainerGpus.Slot> containers) {}

  static Pod pod(List<ContainerGpus.Slot> init, List<ContainerGpus.Slot> containers) {
    return new Pod(init, containers);
  }

  static String split(Pod pod, Integer... gpus) {
    return ContainerGpus.split(pod.init(), pod.containers(), List.of(gpus)).map(ContainerGpus::format).orElse("none");
  }

  @Test
  void regularContainersGetDisjointPartsInOrder() {
    assertThat(split(pod(List.of(), List.of(c("trainer", 2, null), c("evaluator", 1, null))), 5, 6, 7)).isEqualTo("trainer=5,6;evaluator=7");
  }

  @Test
  void aPlainInitContainersGpusAreReusedByTheContainersAfterIt() {
    assertThat(split(pod(List.of(c("prep", 1, null)), List.of(c("train", 2, null))), 0, 3)).isEqualTo("prep=0;train=0,3");
    assertThat(split(pod(List.of(c("prep", 3, null)), List.of(c("main", 1, null))), 0, 2, 3)).isEqualTo("prep=0,2,3;main=0");
  }

  @Test
  void aSidecarKeepsItsGpusAndTheInitContainerAfterItTakesNewOnes() {
    assertThat(split(pod(List.of(c("proxy", 1, "Always"), c("prep", 2, null)), List.of(c("main", 1, null))), 0, 1, 2))
        .isEqualTo("proxy=0;prep=1,2;main=1");
  }

  @Test
  void tooFewGpusGiveNoSplit() {
    assertThat(split(pod(List.of(), List.of(c("a", 2, null), c("b", 2, null))), 0, 1, 2)).isEqualTo("none");
  }

  @Test
  void parsesWhatItWritesAndRefusesTheUnreadable() {
    assertThat(ContainerGpus.parse("trainer=5,6;evaluator=7")).isEqualTo(Map.of("trainer", List.of(5, 6), "evaluator", List.of(7)));
    assertThatThrownBy(() -> ContainerGpus.parse("trainer")).hasMessage("not container=indices: \"trainer\"");
    assertThatThrownBy(() -> ContainerGpus.parse("a=x")).isInstanceOf(NumberFormatException.class);
  }
}
