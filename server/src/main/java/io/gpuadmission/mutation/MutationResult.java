package io.gpuadmission.mutation;

import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.List;

/** The JSON Patch for a pod (empty when nothing changed), the rules that changed it, and warnings. */
public record MutationResult(ArrayNode patch, List<String> changedRules, List<String> warnings) {
  public MutationResult {
    changedRules = List.copyOf(changedRules);
    warnings = List.copyOf(warnings);
  }

  public boolean changed() {
    return !patch.isEmpty();
  }
}
