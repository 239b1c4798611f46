package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.allocator.Task;
import io.gpuadmission.policy.PolicyParser;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkloadLearnerTest {
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T10:00:00Z"));
  private Duration window = Duration.ofMinutes(60);
  private final WorkloadLearner learner = new WorkloadLearner(clock, () -> window);

  @Test
  void countsEveryPendingAndRunningGpuPodByItsAskWholeGpusIncluded() {
    learner.observe(pod("share-a", "4", null, "2", "Pending"), PolicyParser.builtInDefault());
    learner.observe(pod("share-b", "4", null, "2", "Running"), PolicyParser.builtInDefault());
    learner.observe(pod("share-c", "8", null, "2", "Pending"), PolicyParser.builtInDefault());
    learner.observe(pod("train-1", null, "1", "8", "Running"), PolicyParser.builtInDefault());
    learner.observe(pod("train-8", null, "8", "64", "Pending"), PolicyParser.builtInDefault());
    learner.observe(pod("web", null, null, "2", "Running"), PolicyParser.builtInDefault());
    // The same pods again (an update, kube-scheduler's second attempt): nothing changes.
    learner.observe(pod("share-a", "4", null, "2", "Running"), PolicyParser.builtInDefault());
    learner.seen("uid-train-8", GpuAsk.whole(8).with(64_000, java.util.Set.of()));

    var workload = learner.get();

    assertThat(workload.source()).isEqualTo(TargetWorkload.Source.LEARNED);
    assertThat(workload.pods()).isEqualTo(5);
    assertThat(workload.weights())
        .containsExactlyEntriesOf(
            ordered(Task.share(2000, 4), 2.0, Task.share(2000, 8), 1.0, Task.whole(8000, 1), 1.0, Task.whole(64_000, 8), 1.0));
    assertThat(WorkloadInspection.of(workload, 60).asks())
        .extracting(WorkloadInspection.Ask::ask, WorkloadInspection.Ask::share)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("4GiB of one GPU, 2 CPU", 0.4),
            org.assertj.core.groups.Tuple.tuple("8GiB of one GPU, 2 CPU", 0.2),
            org.assertj.core.groups.Tuple.tuple("1 whole GPU, 8 CPU", 0.2),
            org.assertj.core.groups.Tuple.tuple("8 whole GPUs, 64 CPU", 0.2));
  }

  @Test
  void finishedAndDeletedPodsCountForTheWindowThenLeave() {
    var policy = PolicyParser.builtInDefault();
    learner.observe(pod("share-a", "4", null, "2", "Running"), policy);
    learner.observe(pod("share-b", "4", null, "2", "Running"), policy);
    learner.observe(pod("train-1", null, "1", "8", "Running"), policy);
    var before = learner.get();

    clock.now = clock.now.plusSeconds(60);
    learner.observe(pod("share-a", "4", null, "2", "Succeeded"), policy);
    clock.now = clock.now.plusSeconds(600);
    learner.gone(pod("train-1", null, "1", "8", "Running"), policy);
    // A finished pod seen again (its deletion) keeps its first end.
    clock.now = clock.now.plusSeconds(60);
    learner.gone(pod("share-a", "4", null, "2", "Succeeded"), policy);

    assertThat(learner.get()).isSameAs(before);
    assertThat(learner.get().weights()).containsExactlyEntriesOf(ordered(Task.share(2000, 4), 2.0, Task.whole(8000, 1), 1.0));

    clock.now = Instant.parse("2026-01-01T11:01:00Z"); // share-a ended at 10:01: an hour ago
    assertThat(learner.get().weights()).containsExactlyEntriesOf(ordered(Task.share(2000, 4), 1.0, Task.whole(8000, 1), 1.0));
    assertThat(learner.get().pods()).isEqualTo(2);

    window = Duration.ZERO; // a policy that counts only pending and running pods
    learner.observe(pod("share-c", "4", null, "2", "Running"), policy);
    assertThat(learner.get().weights()).containsExactlyEntriesOf(ordered(Task.share(2000, 4), 2.0));
    assertThat(learner.get().pods()).isEqualTo(2);
  }

  @Test
  void aPodKubeSchedulerAsksAboutCountsAtOnceButOnlyForAMinuteUnlessTheInformerShowsIt() {
    learner.asked("uid-new", GpuAsk.share(4).with(1000, java.util.Set.of()));
    learner.asked("uid-bogus", GpuAsk.whole(8));
    learner.asked("uid-new", GpuAsk.share(4).with(1000, java.util.Set.of()));
    assertThat(learner.get().weights()).containsExactlyEntriesOf(ordered(Task.share(1000, 4), 1.0, Task.whole(0, 8), 1.0));

    clock.now = clock.now.plusSeconds(30);
    learner.observe(pod("new", "4", null, "1", "Pending"), PolicyParser.builtInDefault());
    clock.now = clock.now.plusSeconds(31);

    // uid-bogus was never shown by the informer (deleted at once, or no pod at all): it is gone.
    assertThat(learner.get().weights()).containsExactlyEntriesOf(ordered(Task.share(1000, 4), 1.0));
    assertThat(learner.get().pods()).isEqualTo(1);
  }

  @Test
  void atMostTenThousandPodsCountOnKubeSchedulersWordAlone() {
    for (int i = 0; i < WorkloadLearner.MAX_UNCONFIRMED + 5; i++) {
      learner.asked("uid-" + i, GpuAsk.share(4));
    }
    learner.seen("uid-0", GpuAsk.share(4));
    learner.asked("uid-late", GpuAsk.share(2));

    assertThat(learner.get().weights()).containsExactlyEntriesOf(ordered(Task.share(0, 4), 10_000.0, Task.share(0, 2), 1.0));
  }

  @Test
  void aPodWhoseAskChangesCountsOnceWithItsNewAsk() {
    learner.seen("uid-x", GpuAsk.share(4));
    learner.seen("uid-x", GpuAsk.share(6));

    assertThat(learner.get().weights()).containsExactlyEntriesOf(ordered(Task.share(0, 6), 1.0));
    assertThat(learner.get().version()).isEqualTo(1);
  }

  private static Map<Task, Double> ordered(Object... pairs) {
    var map = new LinkedHashMap<Task, Double>();
    for (int i = 0; i < pairs.length; i += 2) {
      map.put((Task) pairs[i], (Double) pairs[i + 1]);
    }
    return map;
  }

  /** A pod asking GiB of one GPU or whole GPUs, and CPU (cores), in a phase. */
  private static io.fabric8.kubernetes.api.model.Pod pod(String name, String gib, String gpus, String cpu, String phase) {
    var limits = new LinkedHashMap<String, Quantity>();
    if (gib != null) {
      limits.put("aliyun.com/gpu-mem", new Quantity(gib));
    }
    if (gpus != null) {
      limits.put("nvidia.com/gpu", new Quantity(gpus));
    }
    return new PodBuilder()
        .withNewMetadata().withName(name).withNamespace("ml").withUid("uid-" + name).endMetadata()
        .withNewSpec().addNewContainer().withName("main").withImage("cuda")
        .withNewResources().withLimits(limits).addToRequests("cpu", new Quantity(cpu)).endResources()
        .endContainer().endSpec()
        .withNewStatus().withPhase(phase).endStatus()
        .build();
  }

  private static final class MutableClock extends java.time.Clock {
    Instant now;

    MutableClock(Instant now) {
      this.now = now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public java.time.Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
