package io.gpuadmission.allocator;

/** Whether a task fits a node, and the GPU options it has there. No allocation. */
public final class NodeFit {
  private NodeFit() {}

  public static boolean fits(NodeGpus node, Task task) {
    if (node.cpuFree() < task.cpuMilli()) {
      return false;
    }
    if (task.gpus() == 0) {
      return true;
    }
    if (!task.allows(node.model())) {
      return false;
    }
    var usable = 0;
    var gpus = node.gpus();
    for (int i = 0; i < gpus.size(); i++) {
      if (usable(gpus.get(i), task)) {
        usable++;
        if (usable >= task.gpus()) {
          return true;
        }
      }
    }
    return false;
  }

  /** True when {@code gpu} could hold one GPU's part of {@code task}. */
  static boolean usable(GpuDevice gpu, Task task) {
    return task.isShare() ? gpu.free() >= task.perGpu() : gpu.wholeFree() && gpu.capacity() >= task.perGpu();
  }
}
