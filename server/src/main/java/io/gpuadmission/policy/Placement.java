package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Value of ACK's {@code ack.node.gpu.placement} node label. */
public enum Placement {
  @JsonProperty("binpack")
  BINPACK,
  @JsonProperty("spread")
  SPREAD;

  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
