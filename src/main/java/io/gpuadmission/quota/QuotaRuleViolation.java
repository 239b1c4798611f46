package io.gpuadmission.quota;

/**
 * A rule of the tree that a quota node breaks: where ({@code spec.root.children[1]}), which quota
 * node (its name), and the rule in words.
 */
public record QuotaRuleViolation(String path, String quota, String rule) {
  /** {@code spec.root.children[1] (team-a): min nvidia.com/gpu 8 > max 4}. */
  public String message() {
    return path + " (" + quota + "): " + rule;
  }
}
