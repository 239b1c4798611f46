package io.gpuadmission.placement;

import java.time.Instant;
import java.util.List;

/**
 * GPUs of one node held by one pod: a memory share of one GPU ({@code memory} GiB) or whole GPUs
 * ({@code memory} 0), and the CPU it requests (milli; FGD counts what GPU pods leave of a node's
 * CPU). The phase says how sure the ledger is, as in kube-scheduler's cache.
 */
public record GpuClaim(
    String podUid, String pod, String node, List<Integer> gpus, long memory, Phase phase, Instant expires, long cpuMilli) {
  public GpuClaim {
    gpus = List.copyOf(gpus);
  }

  /** A claim that holds no CPU. */
  public GpuClaim(String podUid, String pod, String node, List<Integer> gpus, long memory, Phase phase, Instant expires) {
    this(podUid, pod, node, gpus, memory, phase, expires, 0);
  }

  /** Where a claim stands. */
  public enum Phase {
    /**
     * Held for a member of a planned gang until its bind: read from the member's plan annotations,
     * or written by the leader that made the plan until {@code expires} (the informer then shows
     * the annotations and the claim holds until the plan is released).
     */
    PLANNED,
    /**
     * The node kube-scheduler is about to bind the pod to (the one prioritize ranked first, or the
     * only one filter passed), held as kube-scheduler's cache assumes the pod: its binding cycle
     * runs apart from the next pod's scheduling cycle. Held until the pod's bind, its next filter,
     * or {@code expires}; only the leader holds choices.
     */
    CHOSEN,
    /** Chosen by this replica's bind; the pod is not bound yet. */
    RESERVED,
    /** The Binding was created; waiting for the informer to show the annotated pod, until {@code expires}. */
    ASSUMED,
    /** Read from a bound pod's annotations: the truth. */
    BOUND
  }

  public static GpuClaim bound(String podUid, String pod, String node, List<Integer> gpus, long memory) {
    return new GpuClaim(podUid, pod, node, gpus, memory, Phase.BOUND, Instant.MAX);
  }

  /** A bound pod's claim with the CPU it requests. */
  public static GpuClaim bound(String podUid, String pod, String node, List<Integer> gpus, long memory, long cpuMilli) {
    return new GpuClaim(podUid, pod, node, gpus, memory, Phase.BOUND, Instant.MAX, cpuMilli);
  }

  public static GpuClaim reserved(String podUid, String pod, String node, List<Integer> gpus, long memory) {
    return new GpuClaim(podUid, pod, node, gpus, memory, Phase.RESERVED, Instant.MAX);
  }

  /** A reservation that also holds the CPU the pod requests. */
  public static GpuClaim reserved(String podUid, String pod, String node, List<Integer> gpus, long memory, long cpuMilli) {
    return new GpuClaim(podUid, pod, node, gpus, memory, Phase.RESERVED, Instant.MAX, cpuMilli);
  }

  /** GPUs a gang plan holds for a member that is not bound yet. */
  public static GpuClaim planned(String podUid, String pod, String node, List<Integer> gpus, Instant expires) {
    return new GpuClaim(podUid, pod, node, gpus, 0, Phase.PLANNED, expires);
  }

  /** A choice in flight: the pod's bind is expected on this node (see {@link Phase#CHOSEN}). */
  public static GpuClaim chosen(String podUid, String pod, String node, List<Integer> gpus, long memory, long cpuMilli, Instant expires) {
    return new GpuClaim(podUid, pod, node, gpus, memory, Phase.CHOSEN, expires, cpuMilli);
  }

  /**
   * Held for a pod that is not bound and is being placed (a gang's plan, a choice in flight): it
   * counts as used, but there is nobody to evict.
   */
  public boolean forPendingPod() {
    return phase == Phase.PLANNED || phase == Phase.CHOSEN;
  }

  public boolean whole() {
    return memory == 0;
  }

  GpuClaim in(Phase newPhase, Instant newExpires) {
    return new GpuClaim(podUid, pod, node, gpus, memory, newPhase, newExpires, cpuMilli);
  }
}
