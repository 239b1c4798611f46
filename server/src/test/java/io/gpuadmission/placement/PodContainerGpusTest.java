package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.gpuadmission.contract.ContainerGpus;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.Test;

/** A fabric8 pod's containers as the slots of the GPU split: init containers first, sidecars by restartPolicy Always. */
class PodContainerGpusTest {
  /** GPUs each container asks, by name (none for a name not listed). */
  private static final Map<String, Integer> ASKS = Map.of("proxy", 1, "prep", 2, "train", 2, "eval", 1);
  private static final ToIntFunction<Container> COUNT = c -> ASKS.getOrDefault(c.getName(), 0);

  private static Container container(String name, String restartPolicy) {
    return new ContainerBuilder().withName(name).withImage("busybox").withRestartPolicy(restartPolicy).build();
  }

  private static String split(Pod pod, Integer... gpus) {
    return PodContainerGpus.split(pod, List.of(gpus), COUNT).map(ContainerGpus::format).orElse("none");
  }

  @Test
  void containersAreDealtInOrderAndOnesAskingNoGpuGetNoPart() {
    var pod = new PodBuilder().withNewSpec().withContainers(container("train", null), container("logs", null), container("eval", null)).endSpec().build();
    assertThat(split(pod, 4, 6, 7)).isEqualTo("train=4,6;eval=7");
  }

  @Test
  void aPlainInitContainersGpusAreReusedAndASidecarKeepsItsOwn() {
    var pod = new PodBuilder().withNewSpec()
        .withInitContainers(container("proxy", "Always"), container("prep", null))
        .withContainers(container("train", null)).endSpec().build();
    assertThat(split(pod, 0, 1, 2)).isEqualTo("proxy=0;prep=1,2;train=1,2");
    var parts = PodContainerGpus.split(pod, List.of(0, 1, 2), COUNT).orElseThrow();
    assertThat(parts).extracting(ContainerGpus.Part::init).containsExactly(false, true, false);
  }

  @Test
  void tooFewGpusGiveNoSplit() {
    var pod = new PodBuilder().withNewSpec().withContainers(container("train", null), container("eval", null)).endSpec().build();
    assertThat(split(pod, 0, 1)).isEqualTo("none");
  }

  @Test
  void aPodWithoutSpecOrContainersHasNoParts() {
    assertThat(split(new Pod(), 0)).isEmpty();
    assertThat(split(new PodBuilder().withNewSpec().endSpec().build(), 0)).isEmpty();
  }
}
