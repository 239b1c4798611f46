package io.gpuadmission.quota;

import java.util.List;

/**
 * Where the pending pod goes once {@code victims} are evicted: every pod of the plan, a gang's
 * members on other nodes included, ordered by node then uid. No victims: it fits as it is.
 */
public record ReclaimPlan(String node, List<ReclaimVictim> victims) {
  public ReclaimPlan {
    victims = List.copyOf(victims);
  }
}
