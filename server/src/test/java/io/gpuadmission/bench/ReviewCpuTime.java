package io.gpuadmission.bench;

import java.lang.management.ManagementFactory;

/**
 * Thread CPU time per {@code /mutate} and {@code /validate} review in process (decode, rules, patch,
 * encode; no HTTP), after a warm-up counted in CPU seconds too: on a CPU shared with other builds,
 * wall-clock benchmarks measure the machine, CPU time much less so. Used to compare JIT settings
 * and code changes (the second argument: CPU seconds measured per endpoint and fixture, 5 by default):
 *
 * <pre>
 * java -XX:TieredStopAtLevel=1 -cp "server/target/test-classes:server/target/classes:$(cat server/target/bench-classpath.txt)" \
 *   io.gpuadmission.bench.ReviewCpuTime 15 5
 * </pre>
 */
public final class ReviewCpuTime {
  private ReviewCpuTime() {}

  private interface Review {
    byte[] run() throws Exception;
  }

  /** Reviews until {@code nanos} of this thread's CPU time have passed; CPU time per review. */
  private static double cpuMicros(Review review, long nanos) throws Exception {
    var threads = ManagementFactory.getThreadMXBean();
    var start = threads.getCurrentThreadCpuTime();
    var reviews = 0;
    while (threads.getCurrentThreadCpuTime() - start < nanos) {
      review.run();
      reviews++;
    }
    return (threads.getCurrentThreadCpuTime() - start) / 1000.0 / reviews;
  }

  public static void main(String[] args) throws Exception {
    var warmUpNanos = Long.parseLong(args.length > 0 ? args[0] : "15") * 1_000_000_000L;
    var measureNanos = Long.parseLong(args.length > 1 ? args[1] : "5") * 1_000_000_000L;
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
      line.append(String.format(" mutate:%s=%.1fus", fixture, cpuMicros(bench::mutate, measureNanos)));
      line.append(String.format(" validate:%s=%.1fus", fixture, cpuMicros(bench::validate, measureNanos)));
    }
    System.out.println(line);
  }
}
