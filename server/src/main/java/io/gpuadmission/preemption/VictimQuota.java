package io.gpuadmission.preemption;

import java.util.Collection;
import java.util.Optional;

/**
 * Whether team quotas let a preemptor's victims go (teamquota implements it over the tree in
 * force): priority orders pods within a team, and a team's min protects it from the others, so
 * kube-scheduler's priority-only choice must not take a team below its min for a borrower.
 */
@FunctionalInterface
public interface VictimQuota {
  /** Quotas off, or no tree: priority alone decides. */
  VictimQuota NONE = preemptor -> victims -> Optional.empty();

  /** The rules for one preemptor, with its team's usage and its ask read once for every set asked about. */
  Check forPreemptor(PreemptionSearch.Preemptor preemptor);

  /** One preemptor's rules. */
  @FunctionalInterface
  interface Check {
    /** Why the pods {@code victimUids} may not all be evicted for the preemptor; empty when they may. */
    Optional<String> refusal(Collection<String> victimUids);
  }
}
