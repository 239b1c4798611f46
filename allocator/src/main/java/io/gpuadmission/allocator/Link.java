package io.gpuadmission.allocator;

/**
 * How two GPUs are connected: bonded NVLinks (0 for none) and the PCIe/NUMA level. A pair scores
 * 100 per NVLink plus its PCIe points, so NVLink count dominates and distance breaks ties.
 */
public record Link(int nvlinks, PcieLevel level) {
  public static final int POINTS_PER_NVLINK = 100;

  public Link {
    if (nvlinks < 0) {
      throw new IllegalArgumentException("negative NVLink count " + nvlinks);
    }
  }

  public int score() {
    return nvlinks * POINTS_PER_NVLINK + level.points();
  }

  @Override
  public String toString() {
    return nvlinks > 0 ? "NV" + nvlinks : level.name();
  }
}
