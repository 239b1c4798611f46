package io.gpuadmission.node;

import java.time.Instant;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Which pod's container the kubelet is admitting, inferred (no call of the device plugin API
 * carries the pod), and so which GPUs to prefer for it. Pure: the device plugin builds the
 * candidates from its pod cache.
 *
 * <p>Candidates are the pods bound to this node with bind's choice and not yet handed it; each
 * offers its next container in the kubelet's order. The first candidate in the kubelet's admission
 * order whose next container asks {@code size} GPUs, whose part of bind's choice is all {@code
 * available} and includes {@code mustInclude}, is the one. The kubelet's order (v1.32): its pod
 * config source watches the pods bound to the node; a watch event brings one newly bound pod, the
 * first list (a kubelet start) brings many; {@code HandlePodAdditions} sorts each batch by creation
 * time and admits its pods one at a time, every container of a pod (init containers first) before
 * the next pod. So: by arrival on the node (the agent's watch of the same pods sees the same
 * order; the pods of its own first list count as one batch), then creation time, then name.
 *
 * <p>A wrong guess cannot give a GPU twice: the kubelet only allocates devices it holds as free
 * ({@code available}), and a pod whose choice was taken by another no longer matches and gets the
 * topology-best set of what is left.
 */
final class AdmissionGuess {
  private AdmissionGuess() {}

  /** One container still to be admitted: its name, how many GPUs it asks, and its part of bind's choice. */
  record Step(String container, int size, List<Integer> gpus) {
    Step {
      gpus = List.copyOf(gpus);
    }
  }

  /**
   * A pod waiting for its GPUs: {@code steps} are its containers not yet handed their GPUs, in the
   * kubelet's order; {@code handed} the GPUs its earlier containers got (reusable by later ones).
   */
  record Candidate(String uid, String key, long arrival, Instant created, List<Step> steps, Set<Integer> handed) {
    Candidate {
      steps = List.copyOf(steps);
      handed = Set.copyOf(handed);
    }
  }

  /** The guess: this pod's container, these GPUs. */
  record Match(String uid, String key, String container, List<Integer> gpus) {
    Match {
      gpus = List.copyOf(gpus);
    }
  }

  /** The kubelet's admission order. */
  static final Comparator<Candidate> ORDER =
      Comparator.comparingLong(Candidate::arrival).thenComparing(Candidate::created).thenComparing(Candidate::key);

  /** The pod container GetPreferredAllocation({@code available}, {@code mustInclude}, {@code size}) is for, if any fits. */
  static Optional<Match> preferred(List<Candidate> candidates, Set<Integer> available, Set<Integer> mustInclude, int size) {
    return candidates.stream().sorted(ORDER).filter(c -> !c.steps().isEmpty()).filter(c -> {
      var step = c.steps().getFirst();
      return step.size() == size && available.containsAll(step.gpus()) && new HashSet<>(step.gpus()).containsAll(mustInclude);
    }).findFirst().map(c -> match(c, c.steps().getFirst().gpus()));
  }

  /**
   * The pod container Allocate({@code devices}) is for: the one just answered when the kubelet took
   * that answer; else the first candidate whose next container asks that many GPUs, all of them
   * its part or GPUs its earlier containers got (an init container's, which the kubelet hands on
   * without asking for a preference).
   */
  static Optional<Match> allocated(List<Candidate> candidates, Set<Integer> devices, Optional<Match> answered) {
    if (answered.isPresent() && new HashSet<>(answered.get().gpus()).equals(devices)
        && candidates.stream().anyMatch(c -> c.uid().equals(answered.get().uid()) && !c.steps().isEmpty()
            && c.steps().getFirst().container().equals(answered.get().container()))) {
      return answered;
    }
    return candidates.stream().sorted(ORDER).filter(c -> !c.steps().isEmpty()).filter(c -> {
      var step = c.steps().getFirst();
      var mine = new HashSet<>(step.gpus());
      mine.addAll(c.handed());
      return step.size() == devices.size() && mine.containsAll(devices);
    }).findFirst().map(c -> match(c, devices.stream().sorted().toList()));
  }

  private static Match match(Candidate c, List<Integer> gpus) {
    return new Match(c.uid(), c.key(), c.steps().getFirst().container(), gpus);
  }
}
