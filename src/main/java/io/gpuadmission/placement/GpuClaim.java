package io.gpuadmission.placement;

import java.time.Instant;
import java.util.List;

/**
 * GPUs of one node held by one pod: a memory share of one GPU ({@code memory} GiB) or whole GPUs
 * ({@code memory} 0). The phase says how sure the ledger is, as in kube-scheduler's cache.
 */
public record GpuClaim(
    String podUid, String pod, String node, List<Integer> gpus, long memory, Phase phase, Instant expires, long cpuMilli) {
  public GpuClaim {
    gpus = List.copyOf(gpus);
  }

  /** A claim that holds no CPU (the extender's: kube-scheduler counts CPU). */
  public GpuClaim(String podUid, String pod, String node, List<Integer> gpus, long memory, Phase phase, Instant expires) {
    this(podUid, pod, node, gpus, memory, phase, expires, 0);
  }

  /** Where a claim stands. */
  public enum Phase {
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

  public static GpuClaim reserved(String podUid, String pod, String node, List<Integer> gpus, long memory) {
    return new GpuClaim(podUid, pod, node, gpus, memory, Phase.RESERVED, Instant.MAX);
  }

  /** A reservation that also holds CPU, for a ledger that counts it (the trace simulator). */
  public static GpuClaim reserved(String podUid, String pod, String node, List<Integer> gpus, long memory, long cpuMilli) {
    return new GpuClaim(podUid, pod, node, gpus, memory, Phase.RESERVED, Instant.MAX, cpuMilli);
  }

  public boolean whole() {
    return memory == 0;
  }

  GpuClaim in(Phase newPhase, Instant newExpires) {
    return new GpuClaim(podUid, pod, node, gpus, memory, newPhase, newExpires, cpuMilli);
  }
}
