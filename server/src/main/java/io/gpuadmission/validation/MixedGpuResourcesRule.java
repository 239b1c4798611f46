package io.gpuadmission.validation;

import io.fabric8.kubernetes.api.model.Container;
import io.gpuadmission.pod.PodResources;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;

/**
 * A pod gets whole GPUs or shares of GPU memory, of one kind, never two: a node serves one GPU
 * scheduling mode (ACK sets the other modes' resources to 0: a share node offers no {@code
 * nvidia.com/gpu}, a topology node offers only {@code aliyun.com/gpu}), and a pod runs on one node.
 * Checked within each container, then across all of them, init containers included.
 */
public final class MixedGpuResourcesRule implements PodRule {
  static final String NAME = "mixed-gpu-resources";

  @Override
  public void check(PodSubject s, ValidationResult result) {
    var topology = s.policy().topology();
    var share = s.policy().sharedMemory().resourceName();
    var kinds = List.of(share, topology.resourceName(), topology.wholeGpuResource());
    var containers = PodResources.allContainers(s.pod());
    var initCount = s.pod().getSpec() == null || s.pod().getSpec().getInitContainers() == null ? 0 : s.pod().getSpec().getInitContainers().size();
    // The first container asking each kind, in the order the pod lists them (init containers first).
    var firstOfKind = new LinkedHashMap<String, Asker>();
    var mixedWithin = false;
    for (int i = 0; i < containers.size(); i++) {
      var container = containers.get(i);
      var asked = asked(container, kinds);
      var whole = asked.contains(topology.resourceName()) ? topology.resourceName()
          : asked.contains(topology.wholeGpuResource()) ? topology.wholeGpuResource() : null;
      if (whole != null && asked.contains(share)) {
        mixedWithin = true;
        result.refuse(
            NAME,
            "spec.containers[" + container.getName() + "].resources",
            s.prefix() + "container \"" + container.getName() + "\" asks both " + whole + " and " + share
                + "; a container gets whole GPUs or a share of one GPU's memory, not both: remove one of them");
      }
      for (var kind : kinds) {
        if (asked.contains(kind)) {
          firstOfKind.putIfAbsent(kind, new Asker(container.getName(), i < initCount, kind));
        }
      }
    }
    if (mixedWithin || firstOfKind.size() < 2) {
      return;
    }
    result.refuse(
        NAME,
        "spec.containers",
        s.prefix() + Asker.describe(List.copyOf(firstOfKind.values()))
            + " ask GPUs of " + (firstOfKind.size() == 2 ? "two" : "three") + " kinds, but a node serves one kind only:"
            + " GPU-memory shares (" + share + "), whole GPUs (" + topology.wholeGpuResource() + ") or, in the "
            + topology.pool() + " pool, " + topology.resourceName() + "; ACK gives each GPU node one scheduling mode and"
            + " sets the other modes' resources to 0, so no node can run this pod: ask the same kind in every container,"
            + " or split it into two pods");
  }

  /** A container asking one kind of GPU resource. */
  private record Asker(String name, boolean init, String kind) {
    /** {@code containers "a" (x) and "b" (y)}, or {@code init container "a" (x) and container "b" (y)}. */
    static String describe(List<Asker> askers) {
      var sameType = askers.stream().allMatch(a -> a.init() == askers.get(0).init());
      var parts = new ArrayList<String>();
      for (var a : askers) {
        var word = sameType ? "" : (a.init() ? "init container " : "container ");
        parts.add(word + "\"" + a.name() + "\" (" + a.kind() + ")");
      }
      var listed = parts.size() == 2
          ? parts.get(0) + " and " + parts.get(1)
          : String.join(", ", parts.subList(0, parts.size() - 1)) + " and " + parts.get(parts.size() - 1);
      return (sameType ? (askers.get(0).init() ? "init containers " : "containers ") : "") + listed;
    }
  }

  /** The GPU resources of {@code kinds} a container names in its limits or requests. */
  private static Set<String> asked(Container container, List<String> kinds) {
    var names = new HashSet<String>();
    var r = container.getResources();
    if (r != null) {
      if (r.getLimits() != null) {
        names.addAll(r.getLimits().keySet());
      }
      if (r.getRequests() != null) {
        names.addAll(r.getRequests().keySet());
      }
    }
    names.retainAll(kinds);
    return names;
  }
}
