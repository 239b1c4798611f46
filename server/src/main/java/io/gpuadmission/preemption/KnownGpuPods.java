package io.gpuadmission.preemption;

import java.util.List;
import java.util.Optional;

/**
 * The GPU pods the pod informer knows, as team quotas read them: a pod's facts by UID, every bound
 * pod that asks GPUs (whether the ledger holds GPUs for it or not), and a generation to cache what
 * is derived from them.
 */
public interface KnownGpuPods {
  Optional<PodFacts> facts(String uid);

  /** Every bound, unfinished pod asking GPUs, in no particular order. */
  List<PodFacts> bound();

  /** Pending pods the service holds room for (quota reclaim's): they count in their team's usage. */
  default List<PodFacts> held() {
    return List.of();
  }

  /**
   * Changes when a pod asking GPUs that is bound (or that the ledger holds GPUs for, or that room is
   * held for) appears or goes, or its node, ask, priority, start or gang changes, or it starts terminating; not on any other update of a pod (the
   * informer tells of every status change, and filter reads the quota book for every pod).
   */
  long generation();
}
