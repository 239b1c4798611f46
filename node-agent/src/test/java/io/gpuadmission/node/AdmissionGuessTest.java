package io.gpuadmission.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.node.AdmissionGuess.Candidate;
import io.gpuadmission.node.AdmissionGuess.Match;
import io.gpuadmission.node.AdmissionGuess.Step;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which pod's container the kubelet is admitting, and which GPUs to prefer for it. */
class AdmissionGuessTest {
  static final Instant T = Instant.parse("2026-11-26T10:00:00Z");

  static Candidate pod(String name, long arrival, Instant created, Set<Integer> handed, Step... steps) {
    return new Candidate("uid-" + name, "ns/" + name, arrival, created, List.of(steps), handed);
  }

  static Step step(String container, Integer... gpus) {
    return new Step(container, gpus.length, List.of(gpus));
  }

  @Test
  void theFirstArrivedPodWhoseNextContainerFitsIsTheOne() {
    var later = pod("later", 2, T, Set.of(), step("c", 1, 2));
    var first = pod("first", 1, T.plusSeconds(5), Set.of(), step("c", 0, 3));

    assertThat(AdmissionGuess.preferred(List.of(later, first), Set.of(0, 1, 2, 3), Set.of(), 2))
        .contains(new Match("uid-first", "ns/first", "c", List.of(0, 3)));
  }

  @Test
  void withinOneArrivalBatchTheOldestComesFirstAsTheKubeletSortsIt() {
    var young = pod("a-young", 0, T.plusSeconds(1), Set.of(), step("c", 1, 2));
    var old = pod("b-old", 0, T, Set.of(), step("c", 0, 3));

    assertThat(AdmissionGuess.preferred(List.of(young, old), Set.of(0, 1, 2, 3), Set.of(), 2).map(Match::key)).contains("ns/b-old");
  }

  @Test
  void aPodOfAnotherSizeOrWhoseChoiceIsNotAllFreeIsPassedOver() {
    var big = pod("big", 1, T, Set.of(), step("c", 0, 1, 2, 3));
    var taken = pod("taken", 2, T, Set.of(), step("c", 4, 5));
    var fits = pod("fits", 3, T, Set.of(), step("c", 6, 7));

    assertThat(AdmissionGuess.preferred(List.of(big, taken, fits), Set.of(0, 1, 2, 3, 5, 6, 7), Set.of(), 2).map(Match::key)).contains("ns/fits");
    assertThat(AdmissionGuess.preferred(List.of(big, taken), Set.of(0, 1, 2, 3, 5), Set.of(), 2)).isEmpty();
  }

  @Test
  void devicesTheKubeletMustIncludeMustBeInThePart() {
    var init = pod("p", 1, T, Set.of(0), step("train", 0, 3));
    var other = pod("q", 2, T, Set.of(), step("c", 1, 2));

    assertThat(AdmissionGuess.preferred(List.of(init, other), Set.of(0, 1, 2, 3), Set.of(0), 2).map(Match::gpus)).contains(List.of(0, 3));
    assertThat(AdmissionGuess.preferred(List.of(other), Set.of(0, 1, 2, 3), Set.of(0), 2)).isEmpty();
  }

  @Test
  void anAllocationIsTheAnsweredOneWhenTheKubeletTookItElseTheFirstPodItCanBe() {
    var a = pod("a", 1, T, Set.of(), step("c", 0, 3));
    var b = pod("b", 2, T, Set.of(), step("c", 1, 2));
    var answered = Optional.of(new Match("uid-b", "ns/b", "c", List.of(1, 2)));

    assertThat(AdmissionGuess.allocated(List.of(a, b), Set.of(1, 2), answered)).isEqualTo(answered);
    // The kubelet kept other devices than the answer: the pod whose part they are.
    assertThat(AdmissionGuess.allocated(List.of(a, b), Set.of(0, 3), answered).map(Match::key)).contains("ns/a");
    // A container served from its init container's GPUs without a preference asked.
    var reuse = pod("r", 3, T, Set.of(4, 5), step("main", 4));
    assertThat(AdmissionGuess.allocated(List.of(reuse), Set.of(5), Optional.empty()).map(Match::container)).contains("main");
    assertThat(AdmissionGuess.allocated(List.of(a, b), Set.of(6, 7), Optional.empty())).isEmpty();
  }
}
