package io.gpuadmission.teamquota;

import io.gpuadmission.quota.QuotaBook;
import io.gpuadmission.quota.QuotaNode;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Each quota node of the tree in force with its min, max, used and borrowed per resource (Kubernetes
 * quantities), as {@code /extender/inspect} and {@code kubectl gpu-admission explain} show them. A
 * resource the tree names that a min leaves out reads 0; one a max leaves out is not limited and not
 * shown. {@code enabled} is the policy's {@code quotas.enabled}; {@code active} whether quotas are
 * enforced now, and {@code reason} why not when they are not (the policy, or a cluster that does not
 * serve ElasticQuotaTree).
 */
public record QuotaInspection(boolean enabled, boolean active, String reason, String tree, String lastError, List<Quota> quotas) {
  /** One quota node; {@code parent} empty at the root, {@code namespaces} only on leaves. */
  public record Quota(
      String name, String parent, List<String> namespaces, Map<String, String> min, Map<String, String> max, Map<String, String> used,
      Map<String, String> borrowed) {}

  /** Without a tree: no quota applies; {@code off} says why none can be (empty when one could). */
  public static QuotaInspection none(boolean enabled, String off, String lastError) {
    return new QuotaInspection(enabled, off.isEmpty(), off, "", lastError, List.of());
  }

  public static QuotaInspection of(boolean enabled, String off, String source, String lastError, QuotaTree tree, QuotaBook book) {
    var names = QuotaLedgerBook.names(tree);
    var quotas = new ArrayList<Quota>();
    for (var node : tree.nodes()) {
      quotas.add(new Quota(node.name(), node.parent().map(QuotaNode::name).orElse(""), node.namespaces(),
          shown(node.min(), names), shown(node.max(), node.max().names()), shown(book.used(node), names), shown(book.borrowed(node), names)));
    }
    return new QuotaInspection(enabled, off.isEmpty(), off, source, lastError, quotas);
  }

  /** Every resource the tree names, as a quantity ({@code 0} where the amounts do not name it). */
  private static Map<String, String> shown(QuotaResources amounts, java.util.Set<String> names) {
    var out = new TreeMap<String, String>();
    for (var name : names) {
      out.put(name, QuotaResources.format(name, amounts.get(name)));
    }
    return out;
  }
}
