package io.gpuadmission.policy;

/** The node label keys that describe a GPU node (ACK names by default). */
public record NodeLabels(
    String model, String memory, String count, String pool, String placement) {

  /** True when {@code key} is one of the labels that only GPU nodes carry. */
  public boolean isGpuLabel(String key) {
    return key.equals(model) || key.equals(memory) || key.equals(count) || key.equals(pool);
  }
}
