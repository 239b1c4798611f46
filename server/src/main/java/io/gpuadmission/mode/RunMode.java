package io.gpuadmission.mode;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How this process runs, from one artifact: the webhook and extender ({@code server}, the
 * default) or the command line ({@code cli}: explain, place, policy check, with nothing listening
 * and nothing contacting a cluster). (The DaemonSet's node agent is the node-agent module's program.)
 * Chosen by {@value #PROPERTY} (environment {@code GPU_ADMISSION_MODE}); command-line arguments
 * choose {@code cli} before Quarkus starts ({@code main/GpuAdmissionMain}).
 */
public enum RunMode {
  SERVER("server"),
  CLI("cli");

  public static final String PROPERTY = "gpu-admission.mode";

  private final String value;

  RunMode(String value) {
    this.value = value;
  }

  /** The name as configured: {@code server}, {@code cli}. */
  public String value() {
    return value;
  }

  /**
   * True only for the server: the HTTPS listener, its certificate, the informers, leader election
   * and the metrics of the webhook and extender exist in this mode alone.
   */
  public boolean servesWebhook() {
    return this == SERVER;
  }

  /** The mode named {@code text} (surrounding blanks and case ignored). */
  public static RunMode parse(String text) {
    var wanted = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
    for (var mode : values()) {
      if (mode.value.equals(wanted)) {
        return mode;
      }
    }
    throw new IllegalArgumentException(
        PROPERTY + " is \"" + text + "\": expected one of "
            + Arrays.stream(values()).map(RunMode::value).collect(Collectors.joining(", ")));
  }

  @Override
  public String toString() {
    return value;
  }
}
