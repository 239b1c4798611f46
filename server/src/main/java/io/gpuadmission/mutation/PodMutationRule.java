package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * One mutation rule. It edits {@code pod}, a private copy, in place and tells {@code report} what
 * it changed; it never writes patch operations (the engine diffs). Applying a rule to a pod it
 * has already changed must change nothing.
 */
public interface PodMutationRule {
  /** Short name, recorded in the {@code gpu-admission.io/mutated} annotation and in metrics. */
  String name();

  void apply(Pod pod, MutationContext context, MutationReport report);
}
