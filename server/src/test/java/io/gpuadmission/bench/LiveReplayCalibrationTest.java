package io.gpuadmission.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.gpuadmission.kubescheduler.SchedulerConfiguration;
import java.io.IOException;
import java.nio.file.Path;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The trace simulator against what a real kube-scheduler v1.32 did on the same 100-node sample
 * ({@code src/test/resources/trace/README.md}, "live-sample-seed7"): the same arrival order
 * ({@code replay.csv}), pods with a CPU request and no memory request, nodes that take 256 pods.
 * The seed only drives kube-scheduler's random pick among equal totals. Live figures: gpushare
 * 86.08 % (86.01 % on another day), fgd 85.53 %, binpack 85.32 % on the share tasks; fgd 95.52 %
 * on every GPU task. The shipped default, {@code fgd-lookahead}, has not been replayed live yet: its
 * figures here are the simulator's, which kube-scheduler's model equals pod by pod.
 */
class LiveReplayCalibrationTest {
  private static final Path SAMPLE = Path.of("server/src/test/resources/trace/live-sample-seed7");
  private static TraceSimulator shares;
  private static TraceSimulator mixed;
  private static SchedulerConfiguration shipped;

  @BeforeAll
  static void load() throws IOException {
    shares = sample("shares");
    mixed = sample("mixed");
    shipped = TraceSimulator.shippedScheduler();
  }

  private static TraceSimulator sample(String replay) throws IOException {
    var dir = SAMPLE.resolve(replay);
    return TraceSimulator.load(dir.resolve("nodes.csv"), dir.resolve("pods.csv")).replaying(dir.resolve("replay.csv"));
  }

  private static TraceSimulator.Options live(String policy, String through, String tasks) {
    return TraceSimulator.Options.liveReplay(policy, through, shipped).with("tasks", tasks);
  }

  private static final java.util.Map<String, TraceSimulator.Result> RUNS = new java.util.concurrent.ConcurrentHashMap<>();

  /** Seed 1 of a run, each run once for all the tests that read it. */
  private static TraceSimulator.Result once(TraceSimulator sample, TraceSimulator.Options options) {
    return RUNS.computeIfAbsent((sample == shares ? "shares " : "mixed ") + options, key -> sample.run(options, 1, 1.3));
  }

  @Test
  void theReplayOrderIsTheSimulatorsOwnShuffleOfSeed42() throws IOException {
    var dir = SAMPLE.resolve("shares");
    var shuffled = TraceSimulator.load(dir.resolve("nodes.csv"), dir.resolve("pods.csv")).arrivals("shares", 42, 1.3);

    assertThat(shares.arrivals("shares", 7, 1.3)).hasSize(1133).isEqualTo(shuffled);
  }

  @Test
  void gpushareThroughTheKubeSchedulerModelLandsWithinAThirdOfAPointOfTheLiveReplay() {
    var runs = LongStream.rangeClosed(1, 5).mapToObj(seed -> shares.run(live("gpushare", "kube-scheduler", "shares"), seed, 1.3)).toList();

    assertThat(runs).extracting(TraceSimulator.Result::figures)
        .containsExactly("0.8580 770 363", "0.8596 775 358", "0.8621 775 358", "0.8590 781 352", "0.8594 776 357");
    var mean = runs.stream().mapToDouble(TraceSimulator.Result::allocationRatio).average().orElseThrow();
    assertThat(mean).isCloseTo(0.8608, within(0.003));
  }

  @Test
  void fgdAndBinpackLandWithinAThirdOfAPointOfTheLiveReplay() {
    // The shipped weight makes the extender's choice kube-scheduler's (TraceSimulatorTest shows it pod by pod).
    var fgd = once(shares, live("fgd", "simulator", "shares"));
    var binpack = once(shares, live("binpack", "simulator", "shares"));

    assertThat(fgd.figures()).isEqualTo("0.8553 753 380");
    assertThat(fgd.allocationRatio()).isCloseTo(0.8553, within(0.003));
    assertThat(binpack.figures()).isEqualTo("0.8525 749 384");
    assertThat(binpack.allocationRatio()).isCloseTo(0.8532, within(0.003));
  }

  @Test
  void cpuAwareFgdStrandsLessGpuBehindExhaustedCpuThanFgdAndGivesNothingBackOnTheMixedReplay() {
    var shareRun = once(shares, live("fgd-cpu", "simulator", "shares"));
    var mixedRun = once(mixed, live("fgd-cpu", "simulator", "all"));

    assertThat(shareRun.figures()).isEqualTo("0.8608 757 376");
    assertThat(mixedRun.figures()).isEqualTo("0.9565 579 190");
  }

  @Test
  void lookaheadPlacesHalfAPointMoreThanLiveGpushareOnTheSharesAndKeepsTheMixedReplay() {
    var shareRun = once(shares, live("fgd-lookahead", "simulator", "shares"));
    var mixedRun = once(mixed, live("fgd-lookahead", "simulator", "all"));

    // gpushare: 86.08 % live, 85.99 % its model's mean (seeds 1-10); issue 31 asks 0.5 point more.
    assertThat(shareRun.figures()).isEqualTo("0.8698 770 363");
    assertThat(shareRun.allocationRatio()).isGreaterThanOrEqualTo(0.8608 + 0.005);
    assertThat(mixedRun.figures()).isEqualTo("0.9590 581 188");
    assertThat(mixedRun.allocationRatio()).isGreaterThanOrEqualTo(0.95);
  }
}
