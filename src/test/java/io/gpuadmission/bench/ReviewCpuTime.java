package io.gpuadmission.bench;

import java.lang.management.ManagementFactory;

/**
 * Thread CPU time per {@code /mutate} review in process (decode, rules, patch, encode; no HTTP),
 * after a warm-up counted in CPU seconds too: on a CPU shared with other builds, wall-clock
 * benchmarks measure the machine, CPU time much less so. Used to compare JIT settings:
 *
 * <pre>
 * java -XX:TieredStopAtLevel=1 -cp "target/test-classes:target/classes:$(cat target/bench-classpath.txt)" \
 *   io.gpuadmission.bench.ReviewCpuTime 15
 * </pre>
 */
public final class ReviewCpuTime {
  private ReviewCpuTime() {}

  public static void main(String[] args) throws Exception {
    var warmUpNanos = Long.parseLong(args.length > 0 ? args[0] : "15") * 1_000_000_000L;
    var threads = ManagementFactory.getThreadMXBean();
    var line = new StringBuilder(String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
    var bench = new AdmissionPathBenchmark();
    for (var fixture : new String[] {"gpu-topology", "gpu-mem", "cpu-only"}) {
      bench.fixture = fixture;
      bench.setUp();
      var start = threads.getCurrentThreadCpuTime();
      while (threads.getCurrentThreadCpuTime() - start < warmUpNanos) {
        bench.mutate();
        bench.validate();
      }
      var measured = threads.getCurrentThreadCpuTime();
      var reviews = 0;
      while (threads.getCurrentThreadCpuTime() - measured < 5_000_000_000L) {
        bench.mutate();
        reviews++;
      }
      var micros = (threads.getCurrentThreadCpuTime() - measured) / 1000.0 / reviews;
      line.append(String.format(" %s=%.1fus", fixture, micros));
    }
    System.out.println(line);
  }
}
