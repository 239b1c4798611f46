package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.placement.GpuClaim.Phase;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The ledger's phases, as kube-scheduler's cache: reserve, unreserve, assume, confirm, expire, rebuild. */
class GpuLedgerTest {
  private static final Instant T0 = Instant.parse("2026-11-22T05:00:00Z");
  private final GpuLedger ledger = new GpuLedger();

  GpuLedgerTest() {
    ledger.putNode(new GpuNodeCapacity("n", "V100", List.of(16L, 16L), Optional.empty()));
  }

  private long free(int gpu) {
    return ledger.view("n").orElseThrow().gpus().get(gpu).free();
  }

  @Test
  void reservationHoldsMemoryAndRefusesWhatNoLongerFits() {
    assertThat(ledger.reserve(GpuClaim.reserved("a", "ns/a", "n", List.of(0), 10))).isTrue();
    assertThat(ledger.reserve(GpuClaim.reserved("b", "ns/b", "n", List.of(0), 8))).isFalse();
    assertThat(ledger.reserve(GpuClaim.reserved("w", "ns/w", "n", List.of(0), 0))).isFalse();
    assertThat(ledger.reserve(GpuClaim.reserved("w", "ns/w", "n", List.of(1), 0))).isTrue();

    assertThat(free(0)).isEqualTo(6);
    assertThat(free(1)).isZero();
    assertThat(ledger.reserve(GpuClaim.reserved("x", "ns/x", "gone", List.of(0), 1))).isFalse();
  }

  @Test
  void unreserveUndoesAReservationButNeverAConfirmedClaim() {
    ledger.reserve(GpuClaim.reserved("a", "ns/a", "n", List.of(0), 10));
    ledger.unreserve("a");
    assertThat(free(0)).isEqualTo(16);

    ledger.confirm(GpuClaim.bound("b", "ns/b", "n", List.of(0), 4));
    ledger.unreserve("b");
    assertThat(free(0)).isEqualTo(12);
  }

  @Test
  void assumedClaimExpiresUnlessTheInformerConfirmsIt() {
    ledger.reserve(GpuClaim.reserved("a", "ns/a", "n", List.of(0), 10));
    ledger.reserve(GpuClaim.reserved("b", "ns/b", "n", List.of(1), 6));
    ledger.assume("a", T0.plusSeconds(30));
    ledger.assume("b", T0.plusSeconds(30));
    ledger.confirm(GpuClaim.bound("b", "ns/b", "n", List.of(1), 6));

    assertThat(ledger.expire(T0.plusSeconds(29))).isEmpty();
    assertThat(ledger.expire(T0.plusSeconds(30))).extracting(GpuClaim::podUid).containsExactly("a");
    assertThat(ledger.claims().get("b").phase()).isEqualTo(Phase.BOUND);
    assertThat(free(0)).isEqualTo(16);
    assertThat(free(1)).isEqualTo(10);
  }

  @Test
  void rebuildReplacesConfirmedClaimsAndKeepsThisReplicasReservations() {
    ledger.confirm(GpuClaim.bound("old", "ns/old", "n", List.of(0), 4));
    ledger.reserve(GpuClaim.reserved("mine", "ns/mine", "n", List.of(1), 2));

    ledger.rebuild(List.of(GpuClaim.bound("new", "ns/new", "n", List.of(0), 8)));

    assertThat(ledger.claims().keySet()).containsExactlyInAnyOrder("new", "mine");
    assertThat(free(0)).isEqualTo(8);
    assertThat(free(1)).isEqualTo(14);
  }

  @Test
  void aRebuildLeavesThePodsTheInformerToldOfWhileItsListWasReadAsTheInformerSaid() {
    ledger.confirm(GpuClaim.bound("stale", "ns/stale", "n", List.of(0), 2));
    ledger.confirm(GpuClaim.bound("deleted", "ns/deleted", "n", List.of(0), 3));
    var rebuild = ledger.beginRebuild();
    // The list is read here: it has "deleted" and "listed", not "stale" (deleted before) nor "bound".
    var list = List.of(GpuClaim.bound("deleted", "ns/deleted", "n", List.of(0), 3), GpuClaim.bound("listed", "ns/listed", "n", List.of(1), 4));
    ledger.forget("deleted");
    ledger.confirm(GpuClaim.bound("bound", "ns/bound", "n", List.of(0), 5));

    rebuild.apply(list);

    assertThat(ledger.claims().keySet()).containsExactlyInAnyOrder("bound", "listed");
    assertThat(free(0)).isEqualTo(11);
    assertThat(free(1)).isEqualTo(12);
  }

  @Test
  void anOlderRebuildAppliedAfterANewerOneChangesNothingTheNewerOneSet() {
    var older = ledger.beginRebuild();
    var newer = ledger.beginRebuild();
    newer.apply(List.of(GpuClaim.bound("a", "ns/a", "n", List.of(0), 4)));

    older.apply(List.of(GpuClaim.bound("gone", "ns/gone", "n", List.of(1), 4)));

    assertThat(ledger.claims().keySet()).containsExactly("a");
  }

  @Test
  void unhealthyGpusHaveNothingFreeAndClearWhenTheConfigMapEmpties() {
    ledger.setUnhealthy("n", Set.of(1));
    assertThat(free(1)).isZero();
    assertThat(ledger.reserve(GpuClaim.reserved("a", "ns/a", "n", List.of(1), 1))).isFalse();

    ledger.setUnhealthy("n", Set.of());
    assertThat(free(1)).isEqualTo(16);
  }

  @Test
  void forgettingAPodFreesItsGpus() {
    ledger.confirm(GpuClaim.bound("a", "ns/a", "n", List.of(0, 1), 0));
    assertThat(free(0)).isZero();

    ledger.forget("a");

    assertThat(free(0)).isEqualTo(16);
    assertThat(ledger.claimsOn("n")).isEmpty();
  }

  @Test
  void aPlanSeenBeforeItsNodeHoldsItsGpusOnceTheNodeArrives() {
    var ledger = new GpuLedger();
    var planned = GpuClaim.planned("u-1", "ml/bert-worker-0", "later", List.of(1), java.time.Instant.MAX);

    assertThat(ledger.planSeen(planned)).isTrue();
    ledger.putNode(new GpuNodeCapacity("later", "V100", List.of(16L, 16L), Optional.empty()));

    assertThat(ledger.view("later").orElseThrow().gpus()).extracting(g -> g.wholeFree()).containsExactly(true, false);
    // A plan the leader makes now must fit: on a node it has not seen it cannot.
    assertThat(ledger.plan(GpuClaim.planned("u-2", "ml/bert-worker-1", "unseen", List.of(0), java.time.Instant.MAX), java.time.Instant.MAX)).isFalse();
  }
}
