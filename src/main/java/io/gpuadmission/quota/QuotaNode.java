package io.gpuadmission.quota;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** A quota node of a checked tree: its spec, its place (path, parent) and its children. */
public final class QuotaNode {
  private final QuotaNodeSpec spec;
  private final String path;
  private final QuotaNode parent;
  private final List<QuotaNode> children = new ArrayList<>();

  QuotaNode(QuotaNodeSpec spec, String path, QuotaNode parent) {
    this.spec = spec;
    this.path = path;
    this.parent = parent;
  }

  /** Its name (unique in the tree). */
  public String name() {
    return spec.name();
  }

  /** What it is guaranteed. */
  public QuotaResources min() {
    return spec.min();
  }

  /** What it may use at most, borrowing included; an absent resource has no limit. */
  public QuotaResources max() {
    return spec.max();
  }

  /** The namespaces of a leaf (none on a parent). */
  public List<String> namespaces() {
    return spec.namespaces();
  }

  /** Its children, in the order written. */
  public List<QuotaNode> children() {
    return List.copyOf(children);
  }

  /** Its parent, empty at the root. */
  public Optional<QuotaNode> parent() {
    return Optional.ofNullable(parent);
  }

  /** Where it is written: {@code spec.root.children[1].children[0]}. */
  public String path() {
    return path;
  }

  /** Whether it has no children (pods are counted on leaves). */
  public boolean isLeaf() {
    return children.isEmpty();
  }

  /** It and its ancestors, itself first, the root last. */
  public List<QuotaNode> pathToRoot() {
    var nodes = new ArrayList<QuotaNode>();
    for (var node = this; node != null; node = node.parent) {
      nodes.add(node);
    }
    return List.copyOf(nodes);
  }

  /** The spec it was built from. */
  public QuotaNodeSpec spec() {
    return spec;
  }

  void addChild(QuotaNode child) {
    children.add(child);
  }

  @Override
  public String toString() {
    return name();
  }
}
