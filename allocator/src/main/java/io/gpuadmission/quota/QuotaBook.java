package io.gpuadmission.quota;

import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Usage per quota node of a tree, counted from the bound and assumed pods (the ledger's): a pod
 * counts on its leaf and on every ancestor; a pod whose namespace no leaf names counts nowhere.
 * Immutable; {@link #plus} and {@link #minus} give the book after one pod more or less.
 */
public final class QuotaBook {
  private final QuotaTree tree;
  private final Map<QuotaNode, QuotaResources> used;

  private QuotaBook(QuotaTree tree, Map<QuotaNode, QuotaResources> used) {
    this.tree = tree;
    this.used = used;
  }

  /** The usage of {@code pods} (bound and assumed; a gang's members each) in {@code tree}. */
  public static QuotaBook of(QuotaTree tree, Collection<QuotaPod> pods) {
    var book = new QuotaBook(tree, new IdentityHashMap<>());
    for (var pod : pods) {
      book.count(pod.namespace(), pod.ask(), true);
    }
    return book;
  }

  /** The tree it counts in. */
  public QuotaTree tree() {
    return tree;
  }

  /** The book with {@code pod} counted too. */
  public QuotaBook plus(QuotaPod pod) {
    var copy = new QuotaBook(tree, new IdentityHashMap<>(used));
    copy.count(pod.namespace(), pod.ask(), true);
    return copy;
  }

  /** The book without {@code pod} (it was counted). */
  public QuotaBook minus(QuotaPod pod) {
    var copy = new QuotaBook(tree, new IdentityHashMap<>(used));
    copy.count(pod.namespace(), pod.ask(), false);
    return copy;
  }

  /** What the pods of {@code node}'s leaves use. */
  public QuotaResources used(QuotaNode node) {
    return used.getOrDefault(node, QuotaResources.NONE);
  }

  /**
   * What {@code node} would use once the pods counted in {@code takenPerLeaf} (amounts by leaf)
   * have gone: those of leaves under it come off its usage.
   */
  public QuotaResources usedWithout(QuotaNode node, Map<QuotaNode, QuotaResources> takenPerLeaf) {
    var freed = QuotaResources.NONE;
    for (var entry : takenPerLeaf.entrySet()) {
      if (entry.getKey().pathToRoot().contains(node)) {
        freed = freed.add(entry.getValue());
      }
    }
    return used(node).subtract(freed);
  }

  /** What {@code node} uses above its min: borrowed from idle min elsewhere in the tree. */
  public QuotaResources borrowed(QuotaNode node) {
    return used(node).subtract(node.min());
  }

  /**
   * The most {@code node} may use of {@code resource} now if it borrows, its fair share of idle
   * capacity added to its min (see {@link FairShare}); {@link Long#MAX_VALUE} when nothing limits it.
   */
  public long fairLimit(QuotaNode node, String resource) {
    return FairShare.limit(this, node, resource);
  }

  private void count(String namespace, QuotaResources ask, boolean add) {
    var leaf = tree.leafOf(namespace);
    if (leaf.isEmpty()) {
      return;
    }
    for (var node : leaf.get().pathToRoot()) {
      var now = used(node);
      used.put(node, add ? now.add(ask) : now.subtract(ask));
    }
  }
}
