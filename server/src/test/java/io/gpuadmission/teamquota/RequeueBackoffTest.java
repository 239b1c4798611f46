package io.gpuadmission.teamquota;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequeueBackoffTest {
  private static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");

  private final RequeueBackoff backoff = new RequeueBackoff(Duration.ofSeconds(5), Duration.ofSeconds(30));

  private boolean takeAt(String uid, long seconds) {
    return backoff.take(uid, T0.plusSeconds(seconds));
  }

  @Test
  void aPodIsRequeuedOnceItHasFittedForTheFirstWaitThenAfterTwiceAsLongEachTimeUpToTheLast() {
    assertThat(takeAt("p", 0)).isFalse(); // seen fitting: kube-scheduler may be placing it now
    assertThat(takeAt("p", 4)).isFalse();
    assertThat(takeAt("p", 5)).isTrue(); // fitted for 5 s
    assertThat(takeAt("p", 14)).isFalse();
    assertThat(takeAt("p", 15)).isTrue(); // 10 s
    assertThat(takeAt("p", 34)).isFalse();
    assertThat(takeAt("p", 35)).isTrue(); // 20 s
    assertThat(takeAt("p", 64)).isFalse();
    assertThat(takeAt("p", 65)).isTrue(); // 30 s, the last
    assertThat(takeAt("p", 95)).isTrue(); // 30 s again
  }

  @Test
  void eachPodWaitsOnItsOwnAndOneThatStoppedFittingStartsAfresh() {
    assertThat(takeAt("p", 0)).isFalse();
    assertThat(takeAt("q", 1)).isFalse();
    assertThat(takeAt("p", 5)).isTrue();

    backoff.retain(List.of("q"));
    assertThat(takeAt("p", 6)).isFalse(); // forgotten: fits again from now
    assertThat(takeAt("p", 11)).isTrue();
    assertThat(takeAt("q", 5)).isFalse(); // kept: 5 s from when it first fitted
    assertThat(takeAt("q", 6)).isTrue();
  }
}
