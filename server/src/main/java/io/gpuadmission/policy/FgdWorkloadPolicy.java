package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.util.List;
import java.util.Optional;

/**
 * The target workload FGD measures fragmentation against ({@code allocator.memoryShare: fgd}):
 * learned from the cluster's GPU pods (pending, running, and those finished within {@code
 * learnedWindowMinutes}), unless {@code declared} lists the asks and their weights.
 */
public record FgdWorkloadPolicy(int learnedWindowMinutes, List<DeclaredAsk> declared) {
  /** The longest window: a week of finished pods is already more history than FGD needs. */
  public static final int MAX_WINDOW_MINUTES = 7 * 24 * 60;

  public FgdWorkloadPolicy {
    declared = List.copyOf(declared);
  }

  /**
   * One kind of ask: {@code gpuMemory} GiB of one GPU (a share, as {@code aliyun.com/gpu-mem}
   * counts it) or {@code gpus} whole GPUs, the CPU such pods request ({@code "4"}, {@code
   * "500m"}; absent: not weighed), and its weight (how often it comes, relative to the others).
   */
  public record DeclaredAsk(
      @JsonSetter(nulls = Nulls.AS_EMPTY) Optional<Integer> gpuMemory,
      @JsonSetter(nulls = Nulls.AS_EMPTY) Optional<Integer> gpus,
      @JsonSetter(nulls = Nulls.AS_EMPTY) Optional<String> cpu,
      double weight) {
    private static final java.util.regex.Pattern CPU = java.util.regex.Pattern.compile("(\\d+)(\\.(\\d{1,3}))?|(\\d+)m");

    public DeclaredAsk {
      gpuMemory = gpuMemory == null ? Optional.empty() : gpuMemory;
      gpus = gpus == null ? Optional.empty() : gpus;
      cpu = cpu == null ? Optional.empty() : cpu;
    }

    /** Whether {@code cpu} reads as a CPU quantity: whole or decimal cores (up to 3 decimals), or millicores. */
    public boolean cpuReadable() {
      return cpu.isEmpty() || CPU.matcher(cpu.get()).matches();
    }

    /** The CPU in millicores; 0 when not given. Call only when {@link #cpuReadable}. */
    public long cpuMilli() {
      if (cpu.isEmpty()) {
        return 0;
      }
      var m = CPU.matcher(cpu.get());
      if (!m.matches()) {
        throw new IllegalStateException("unreadable CPU " + cpu.get());
      }
      if (m.group(4) != null) {
        return Long.parseLong(m.group(4));
      }
      var fraction = m.group(3) == null ? 0 : Long.parseLong((m.group(3) + "00").substring(0, 3));
      return Long.parseLong(m.group(1)) * 1000 + fraction;
    }
  }
}
