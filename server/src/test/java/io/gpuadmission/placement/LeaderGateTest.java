package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The gate's idea of who leads expires with the Lease, whatever the election thread is doing. */
class LeaderGateTest {
  private static final Instant T0 = Instant.parse("2026-11-22T05:00:00Z");
  private final io.gpuadmission.support.MutableClock clock = new io.gpuadmission.support.MutableClock(T0);

  @Test
  void bindsOnlyBetweenLeadAndTheRenewDeadline() {
    var gate = new LeaderGate("replica-a", clock);
    gate.renewed(T0.plusSeconds(10));
    assertThat(gate.whileLeading(() -> "bound")).isEmpty();

    gate.lead();
    assertThat(gate.whileLeading(() -> "bound")).contains("bound");
    // An older renewal reported late does not shorten the time.
    gate.renewed(T0.plusSeconds(4));
    clock.now = T0.plusSeconds(9);
    assertThat(gate.leading()).isTrue();
    assertThat(gate.renewalOverdue()).isFalse();

    clock.now = T0.plusSeconds(10);
    assertThat(gate.whileLeading(() -> "bound")).isEmpty();
    assertThat(gate.renewalOverdue()).isTrue();
    gate.renewed(T0.plusSeconds(20));
    assertThat(gate.leading()).isTrue();
    gate.stepDown();
    assertThat(gate.leading()).isFalse();
  }

  @Test
  void namesAHolderUntilItsLeaseExpiresThenCountsTheTimeWithoutOne() {
    var gate = new LeaderGate("replica-b", clock);
    assertThat(gate.leader()).isEmpty();
    clock.now = T0.plusSeconds(3);
    assertThat(gate.leaderless()).isEqualTo(Duration.ofSeconds(3));

    gate.leaseSeen("replica-a", T0.plusSeconds(18));
    assertThat(gate.leader()).isEqualTo("replica-a");
    assertThat(gate.leaderless()).isZero();
    assertThat(gate.formerLeader()).isEmpty();

    clock.now = T0.plusSeconds(25);
    assertThat(gate.leader()).isEmpty();
    assertThat(gate.leaderless()).isEqualTo(Duration.ofSeconds(7));
    assertThat(gate.formerLeader()).contains(new LeaderGate.Holder("replica-a", T0.plusSeconds(18)));

    // Released: nobody holds it from the release on.
    gate.leaseSeen("", T0.plusSeconds(24));
    assertThat(gate.leaderless()).isEqualTo(Duration.ofSeconds(1));
    assertThat(gate.formerLeader()).isEmpty();
  }

  @Test
  void aGateAloneAlwaysLeads() {
    var gate = LeaderGate.alone("replica-a");
    assertThat(gate.leading()).isTrue();
    assertThat(gate.leader()).isEqualTo("replica-a");
    assertThat(gate.leaderless()).isZero();
  }
}
