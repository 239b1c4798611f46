package io.gpuadmission.allocator;

/**
 * One GPU of a node: its index on the node, model, capacity and used amount in the unit the
 * caller counts shares in (MiB or GiB of memory, or milli-GPU), and health.
 */
public record GpuDevice(int index, String model, long capacity, long used, boolean healthy) {
  public GpuDevice {
    if (capacity < 0 || used < 0 || used > capacity) {
      throw new IllegalArgumentException("GPU" + index + ": used " + used + " of capacity " + capacity);
    }
  }

  public long free() {
    return healthy ? capacity - used : 0;
  }

  /** Free for a whole-GPU request: healthy and nothing allocated on it. */
  public boolean wholeFree() {
    return healthy && used == 0;
  }

  public GpuDevice withUsed(long newUsed) {
    return new GpuDevice(index, model, capacity, newUsed, healthy);
  }
}
