package io.gpuadmission.allocator;

/**
 * PCIe/NUMA distance between two GPUs, closest first, with the points NVIDIA's go-gpuallocator
 * gives a pair at each level. {@code UNKNOWN} is an NVLink pair whose PCIe path nvidia-smi hides
 * and whose NUMA placement is not known.
 */
public enum PcieLevel {
  PIX(50),
  PXB(40),
  PHB(30),
  NODE(20),
  SYS(10),
  UNKNOWN(0);

  private final int points;

  PcieLevel(int points) {
    this.points = points;
  }

  public int points() {
    return points;
  }
}
