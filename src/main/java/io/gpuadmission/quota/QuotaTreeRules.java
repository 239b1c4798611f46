package io.gpuadmission.quota;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The rules of an ElasticQuotaTree, as ACK's "Work with capacity scheduling" states them (leaves
 * hold the namespaces, each namespace in one leaf only; the root's max equals its min; a parent's
 * min is at least the sum of its children's) and as Koordinator's quota webhook checks them
 * ({@code checkMinQuotaSum}: children's min summed within the parent's min; {@code checkMaxQuota}:
 * a child's max within its parent's; min ≤ max on every quota). Names are unique as the tree
 * refers to quota nodes by name. A resource absent from max is not limited; absent from min is 0.
 */
final class QuotaTreeRules {
  static final String ROOT_PATH = "spec.root";

  private final List<QuotaRuleViolation> violations = new ArrayList<>();
  private final Map<String, String> pathOfName = new HashMap<>();
  private final Map<String, String> leafOfNamespace = new HashMap<>();

  private QuotaTreeRules() {}

  static List<QuotaRuleViolation> check(QuotaNodeSpec root) {
    var rules = new QuotaTreeRules();
    rules.rootMaxEqualsMin(root);
    rules.visit(root, ROOT_PATH, null);
    return List.copyOf(rules.violations);
  }

  private void visit(QuotaNodeSpec node, String path, QuotaNodeSpec parent) {
    uniqueName(node, path);
    minWithinMax(node, path);
    namespaces(node, path);
    if (parent != null) {
      maxWithinParent(node, path, parent);
    }
    childrenMinWithinMin(node, path);
    for (var i = 0; i < node.children().size(); i++) {
      visit(node.children().get(i), path + ".children[" + i + "]", node);
    }
  }

  private void uniqueName(QuotaNodeSpec node, String path) {
    if (node.name() == null || node.name().isBlank()) {
      add(path, "", "a quota node needs a name");
      return;
    }
    var first = pathOfName.putIfAbsent(node.name(), path);
    if (first != null) {
      add(path, node.name(), "name " + node.name() + " is already used at " + first);
    }
  }

  private void minWithinMax(QuotaNodeSpec node, String path) {
    for (var resource : node.min().names()) {
      if (node.max().has(resource) && node.min().get(resource) > node.max().get(resource)) {
        add(path, node.name(), "min " + amount(resource, node.min()) + " > max " + fmt(resource, node.max()));
      }
    }
  }

  private void namespaces(QuotaNodeSpec node, String path) {
    if (!node.children().isEmpty() && !node.namespaces().isEmpty()) {
      add(path, node.name(), "namespaces belong on leaves, not on a quota node with children");
      return;
    }
    for (var namespace : node.namespaces()) {
      var first = leafOfNamespace.putIfAbsent(namespace, node.name());
      if (first != null) {
        add(path, node.name(), "namespace " + namespace + " is already in leaf " + first);
      }
    }
  }

  private void rootMaxEqualsMin(QuotaNodeSpec root) {
    var names = new TreeSet<>(root.min().names());
    names.addAll(root.max().names());
    for (var resource : names) {
      if (!root.min().has(resource) || !root.max().has(resource)
          || root.min().get(resource) != root.max().get(resource)) {
        add(ROOT_PATH, root.name(), "the root's max must equal its min: " + resource + " max "
            + written(resource, root.max()) + ", min " + written(resource, root.min()));
      }
    }
  }

  private void maxWithinParent(QuotaNodeSpec node, String path, QuotaNodeSpec parent) {
    for (var resource : node.max().names()) {
      if (parent.max().has(resource) && node.max().get(resource) > parent.max().get(resource)) {
        add(path, node.name(), "max " + amount(resource, node.max()) + " > max "
            + fmt(resource, parent.max()) + " of its parent " + parent.name());
      }
    }
  }

  private void childrenMinWithinMin(QuotaNodeSpec node, String path) {
    var sum = QuotaResources.NONE;
    for (var child : node.children()) {
      sum = sum.add(child.min());
    }
    for (var resource : sum.names()) {
      if (sum.get(resource) > node.min().get(resource)) {
        add(path, node.name(), "its children's min " + resource + " sum to " + fmt(resource, sum)
            + " > its min " + fmt(resource, node.min()));
      }
    }
  }

  private static String amount(String resource, QuotaResources amounts) {
    return resource + " " + fmt(resource, amounts);
  }

  private static String fmt(String resource, QuotaResources amounts) {
    return QuotaResources.format(resource, amounts.get(resource));
  }

  private static String written(String resource, QuotaResources amounts) {
    return amounts.has(resource) ? fmt(resource, amounts) : "unset";
  }

  private void add(String path, String quota, String rule) {
    violations.add(new QuotaRuleViolation(path, quota == null ? "" : quota, rule));
  }
}
