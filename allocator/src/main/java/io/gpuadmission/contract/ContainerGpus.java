package io.gpuadmission.contract;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Which of a pod's whole GPUs ({@link GpuAnnotations#GPU_INDICES}) each of its containers gets:
 * annotation {@code gpu-admission.io/container-gpus}, {@code "prep=0,3;trainer=0,3,5"}, written by
 * bind beside the pod's indices and read by the node agent's device plugin (so it lives where both
 * programs can use it). Container names are unique within a pod (init containers included) and
 * hold no {@code =}, {@code ;} or {@code ,}.
 *
 * <p>The split follows the kubelet's device manager (v1.32 {@code ManagerImpl.Allocate}), which
 * serves containers in its order, init containers first: a plain init container takes first the
 * GPUs earlier plain init containers held (they are reusable once those ended), then new ones, and
 * leaves all of its own reusable; a sidecar ({@code restartPolicy: Always}) or regular container
 * takes first from what is reusable, then new ones, and keeps them. New ones are taken in the order
 * of the pod's indices. So the parts of plain init containers may overlap later parts; the parts of
 * sidecars and regular containers never overlap one another, and all together are the pod's GPUs.
 */
public final class ContainerGpus {
  public static final String CONTAINER_GPUS = "gpu-admission.io/container-gpus";

  /** One container's part, in the kubelet's order; {@code init}: a plain init container. */
  public record Part(String container, boolean init, List<Integer> gpus) {
    public Part {
      gpus = List.copyOf(gpus);
    }
  }

  private ContainerGpus() {}

  /** A container as the split sees it: its name, whether it is a sidecar (an init container that keeps running), how many GPUs it asks. */
  public record Slot(String name, boolean sidecar, int gpus) {}

  /**
   * The parts of the containers that ask any GPU, in the kubelet's order, dealt from {@code gpus};
   * empty when {@code gpus} do not suffice. (placement/PodContainerGpus makes the slots of a fabric8
   * pod; the node agent, of its own pod record.)
   */
  public static Optional<List<Part>> split(List<Slot> initContainers, List<Slot> containers, List<Integer> gpus) {
    var out = new ArrayList<Part>();
    var fresh = new ArrayList<>(new LinkedHashSet<>(gpus));
    var reusable = new LinkedHashSet<Integer>();
    var ordered = new ArrayList<Slot>(initContainers);
    var regularFrom = ordered.size();
    ordered.addAll(containers);
    for (int i = 0; i < ordered.size(); i++) {
      var container = ordered.get(i);
      var need = container.gpus();
      if (need <= 0) {
        continue;
      }
      var plainInit = i < regularFrom && !container.sidecar();
      var part = new ArrayList<Integer>();
      for (var gpu : reusable) {
        if (part.size() == need) {
          break;
        }
        part.add(gpu);
      }
      while (part.size() < need) {
        if (fresh.isEmpty()) {
          return Optional.empty();
        }
        part.add(fresh.removeFirst());
      }
      if (plainInit) {
        reusable.addAll(part);
      } else {
        part.forEach(reusable::remove);
      }
      out.add(new Part(container.name(), plainInit, part.stream().sorted().toList()));
    }
    return Optional.of(out);
  }

  /** {@code "prep=0,3;trainer=0,3,5"}. */
  public static String format(List<Part> parts) {
    var text = new StringBuilder();
    for (var part : parts) {
      text.append(text.isEmpty() ? "" : ";").append(part.container()).append('=').append(GpuAnnotations.join(part.gpus()));
    }
    return text.toString();
  }

  /** Container name to its GPUs; throws NumberFormatException or IllegalArgumentException on anything unreadable. */
  public static Map<String, List<Integer>> parse(String text) {
    var out = new LinkedHashMap<String, List<Integer>>();
    for (var entry : text.split(";")) {
      if (entry.isBlank()) {
        continue;
      }
      var eq = entry.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("not container=indices: \"" + entry.strip() + "\"");
      }
      out.put(entry.substring(0, eq).strip(), GpuAnnotations.parse(entry.substring(eq + 1)));
    }
    return out;
  }
}
