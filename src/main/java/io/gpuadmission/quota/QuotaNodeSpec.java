package io.gpuadmission.quota;

import java.util.List;

/**
 * One quota node of an {@code ElasticQuotaTree}'s {@code spec.root}, as written: amounts already in
 * canonical units (see {@link QuotaResources#canonical}). Null lists read as empty.
 */
public record QuotaNodeSpec(
    String name, QuotaResources min, QuotaResources max, List<String> namespaces, List<QuotaNodeSpec> children) {
  public QuotaNodeSpec {
    min = min == null ? QuotaResources.NONE : min;
    max = max == null ? QuotaResources.NONE : max;
    namespaces = namespaces == null ? List.of() : List.copyOf(namespaces);
    children = children == null ? List.of() : List.copyOf(children);
  }

  /** A leaf: a quota for these namespaces. */
  public static QuotaNodeSpec leaf(String name, QuotaResources min, QuotaResources max, List<String> namespaces) {
    return new QuotaNodeSpec(name, min, max, namespaces, List.of());
  }

  /** A parent of these quota nodes. */
  public static QuotaNodeSpec parent(
      String name, QuotaResources min, QuotaResources max, List<QuotaNodeSpec> children) {
    return new QuotaNodeSpec(name, min, max, List.of(), children);
  }
}
