package io.gpuadmission.allocator;

import java.util.Arrays;

/**
 * A chosen set of whole GPUs (ascending indices), the sum of its pair scores, and the pair-score
 * sum of the free GPUs it leaves (how well connected the rest stays for later requests).
 */
public record GpuChoice(int[] gpus, long setScore, long remainingScore) {
  public GpuChoice {
    gpus = gpus.clone();
  }

  @Override
  public int[] gpus() {
    return gpus.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof GpuChoice c && Arrays.equals(gpus, c.gpus) && setScore == c.setScore && remainingScore == c.remainingScore;
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(gpus) * 31 + Long.hashCode(setScore * 17 + remainingScore);
  }

  @Override
  public String toString() {
    return Arrays.toString(gpus) + " score " + setScore + " leaves " + remainingScore;
  }
}
