package io.gpuadmission.preemption;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.HeldRoom;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The room quota reclaim freed for a pending pod is written on the pod: a replica that did not
 * free it (another replica, the next leader after a failover) holds it from the pod alone, its
 * GPUs on the node and its ask in its team's quota, until its time, while the pod waits.
 */
class HeldRoomTest {
  private static final String WRITTEN_UNTIL = "2026-12-02T17:00:00Z";

  private final PodFactsIndex otherReplica = new PodFactsIndex(PolicyParser::builtInDefault, new GpuLedger());

  /** The fixture's pod, its room held until {@code until}, written a minute before that. */
  private static Pod heldUntil(Instant until) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("preemption/pod-held-room.yaml")), Pod.class);
    var condition = pod.getStatus().getConditions().get(1);
    var at = until.truncatedTo(ChronoUnit.SECONDS);
    condition.setMessage(condition.getMessage().replace(WRITTEN_UNTIL, at.toString()));
    condition.setLastTransitionTime(at.minus(Duration.ofMinutes(1)).toString());
    return pod;
  }

  @Test
  void theConditionReadsAsTheNodeAndTheTimeItWasWrittenWith() {
    var until = Instant.parse(WRITTEN_UNTIL);
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("preemption/pod-held-room.yaml")), Pod.class);

    assertThat(HeldRoom.of(pod)).contains(new HeldRoom("whole-b", until));
    var written = new HeldRoom("whole-b", until).condition(Instant.parse("2026-12-02T16:59:00.250Z"));
    assertThat(written).isEqualTo(pod.getStatus().getConditions().get(1));
  }

  @Test
  void aReplicaThatDidNotFreeTheRoomHoldsItFromThePod() {
    var pod = heldUntil(Instant.now().plus(Duration.ofMinutes(1)));
    otherReplica.current(pod);

    var uid = pod.getMetadata().getUid();
    assertThat(otherReplica.holdsRoomFor(uid)).isTrue();
    assertThat(otherReplica.held()).extracting(PodFacts::pod).containsExactly("quota-c/c-0");
    assertThat(otherReplica.heldOn("whole-b", 100, "another-pod")).containsExactly(GpuAsk.whole(2));
    assertThat(otherReplica.heldOn("whole-b", 101, "another-pod")).isEmpty();
    assertThat(otherReplica.heldOn("whole-a", 0, "another-pod")).isEmpty();
  }

  @Test
  void aRoomPastItsTimeABoundPodAndAConditionNotTheServicesHoldNothing() {
    otherReplica.current(heldUntil(Instant.now().minusSeconds(1)));
    var bound = heldUntil(Instant.now().plus(Duration.ofMinutes(1)));
    bound.getMetadata().setUid("bound");
    bound.getSpec().setNodeName("whole-b");
    otherReplica.current(bound);
    var released = heldUntil(Instant.now().plus(Duration.ofMinutes(1)));
    released.getMetadata().setUid("released");
    released.getStatus().getConditions().get(1).setStatus("False");
    otherReplica.current(released);
    var foreign = heldUntil(Instant.now().plus(Duration.ofMinutes(1)));
    foreign.getMetadata().setUid("foreign");
    foreign.getStatus().getConditions().get(1).setMessage("held by hand");
    otherReplica.current(foreign);

    assertThat(otherReplica.held()).isEmpty();
    assertThat(otherReplica.heldOn("whole-b", 0, "another-pod")).isEmpty();
  }

  @Test
  void aReplicasOwnLongerHoldStaysAndAShorterOneGivesWayToThePods() {
    var pod = heldUntil(Instant.now().plus(Duration.ofMinutes(1)));
    var uid = pod.getMetadata().getUid();
    otherReplica.hold(uid, new HeldRoom("whole-a", Instant.now().plus(Duration.ofMinutes(5))));
    otherReplica.current(pod);
    assertThat(otherReplica.heldOn("whole-a", 0, "another-pod")).containsExactly(GpuAsk.whole(2));
    assertThat(otherReplica.heldOn("whole-b", 0, "another-pod")).isEmpty();

    otherReplica.hold(uid, new HeldRoom("whole-a", Instant.now().minusSeconds(1)));
    assertThat(otherReplica.holdsRoomFor(uid)).isFalse();
    otherReplica.current(pod);
    assertThat(otherReplica.heldOn("whole-b", 0, "another-pod")).containsExactly(GpuAsk.whole(2));
  }

  /** A writer whose clock runs ahead: the room is held here for as long as it was written for, from now. */
  @Test
  void aRoomWrittenByAClockAheadIsHeldForItsWrittenLengthFromNow() {
    var now = Instant.parse("2026-12-02T16:00:00Z");
    var pod = heldUntil(now.plus(Duration.ofMinutes(31)));  // written 30 minutes "from now", for a minute

    assertThat(HeldRoom.asSeen(pod, now)).contains(new HeldRoom("whole-b", now.plus(Duration.ofMinutes(1))));
    assertThat(HeldRoom.asSeen(pod, now.plus(Duration.ofMinutes(40)))).contains(new HeldRoom("whole-b", now.plus(Duration.ofMinutes(31))));
  }

  /** Team quotas cache their book by the index's generation: a room let go moves it, however it ends. */
  @Test
  void theGenerationMovesWhenAHeldRoomEndsByItsTimeOrItsPodGoing() throws InterruptedException {
    var pod = heldUntil(Instant.now().plus(Duration.ofMinutes(1)));
    otherReplica.current(pod);
    var held = otherReplica.generation();
    otherReplica.gone(pod);
    assertThat(otherReplica.generation()).isGreaterThan(held);
    assertThat(otherReplica.held()).isEmpty();

    var lapsing = heldUntil(Instant.now().plus(Duration.ofSeconds(2)));
    otherReplica.current(lapsing);
    assertThat(otherReplica.held()).hasSize(1);
    var beforeItsTime = otherReplica.generation();
    Thread.sleep(2_100);
    assertThat(otherReplica.generation()).isGreaterThan(beforeItsTime);
    assertThat(otherReplica.held()).isEmpty();
  }
}
