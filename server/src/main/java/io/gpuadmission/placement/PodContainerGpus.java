package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.contract.ContainerGpus;
import io.gpuadmission.pod.PodResources;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.ToIntFunction;

/** {@link ContainerGpus}' split of a fabric8 pod: its init containers and containers as slots. */
public final class PodContainerGpus {
  private PodContainerGpus() {}

  /**
   * The parts of the containers that ask any GPU, in the kubelet's order, dealt from {@code gpus}
   * ({@code count}: how many whole GPUs a container asks); empty when {@code gpus} do not suffice.
   */
  public static Optional<List<ContainerGpus.Part>> split(Pod pod, List<Integer> gpus, ToIntFunction<Container> count) {
    var spec = pod.getSpec();
    var init = new ArrayList<ContainerGpus.Slot>();
    var regular = new ArrayList<ContainerGpus.Slot>();
    if (spec != null && spec.getInitContainers() != null) {
      spec.getInitContainers().forEach(c -> init.add(new ContainerGpus.Slot(c.getName(), PodResources.isSidecar(c), count.applyAsInt(c))));
    }
    if (spec != null && spec.getContainers() != null) {
      spec.getContainers().forEach(c -> regular.add(new ContainerGpus.Slot(c.getName(), false, count.applyAsInt(c))));
    }
    return ContainerGpus.split(init, regular, gpus);
  }
}
