package io.gpuadmission.quota;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A quota tree that keeps ACK's rules (see {@link QuotaTreeRules}): its nodes by name and the leaf
 * of each namespace. Built only through {@link #check}.
 */
public final class QuotaTree {
  private final QuotaNode root;
  private final Map<String, QuotaNode> byName;
  private final Map<String, QuotaNode> leafByNamespace;

  private QuotaTree(QuotaNode root, Map<String, QuotaNode> byName, Map<String, QuotaNode> leafByNamespace) {
    this.root = root;
    this.byName = byName;
    this.leafByNamespace = leafByNamespace;
  }

  /** The tree of {@code root} when it keeps every rule, else every rule it breaks. */
  public static QuotaTreeCheck check(QuotaNodeSpec root) {
    var violations = QuotaTreeRules.check(root);
    if (!violations.isEmpty()) {
      return new QuotaTreeCheck.Invalid(violations);
    }
    var byName = new LinkedHashMap<String, QuotaNode>();
    var leafByNamespace = new LinkedHashMap<String, QuotaNode>();
    var rootNode = build(root, QuotaTreeRules.ROOT_PATH, null, byName, leafByNamespace);
    return new QuotaTreeCheck.Valid(new QuotaTree(rootNode, Map.copyOf(byName), Map.copyOf(leafByNamespace)));
  }

  /** The root (its max equals its min: what the whole tree shares). */
  public QuotaNode root() {
    return root;
  }

  /** The leaf that counts {@code namespace}'s pods; empty when no leaf names it (no quota). */
  public Optional<QuotaNode> leafOf(String namespace) {
    return Optional.ofNullable(leafByNamespace.get(namespace));
  }

  /** The quota node of that name. */
  public Optional<QuotaNode> node(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** Every node, depth first in the order written, the root first. */
  public List<QuotaNode> nodes() {
    var nodes = new ArrayList<QuotaNode>();
    collect(root, nodes);
    return List.copyOf(nodes);
  }

  /** Every namespace that some leaf names. */
  public Collection<String> namespaces() {
    return leafByNamespace.keySet();
  }

  private static void collect(QuotaNode node, List<QuotaNode> into) {
    into.add(node);
    node.children().forEach(child -> collect(child, into));
  }

  private static QuotaNode build(
      QuotaNodeSpec spec,
      String path,
      QuotaNode parent,
      Map<String, QuotaNode> byName,
      Map<String, QuotaNode> leafByNamespace) {
    var node = new QuotaNode(spec, path, parent);
    byName.put(spec.name(), node);
    spec.namespaces().forEach(namespace -> leafByNamespace.put(namespace, node));
    for (var i = 0; i < spec.children().size(); i++) {
      node.addChild(build(spec.children().get(i), path + ".children[" + i + "]", node, byName, leafByNamespace));
    }
    return node;
  }
}
