package io.gpuadmission.quota;

import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Which victims priority preemption may take under team quotas, as the capacity scheduling plugin
 * of scheduler-plugins (ACK's ElasticQuota) decides: priority orders pods within a team, a min
 * protects a team from the others.
 *
 * <ul>
 *   <li>A preemptor whose leaf would pass its min with the pod (it borrows) takes only pods of its
 *       own leaf: borrowed capacity is never taken from another team by priority.
 *   <li>A preemptor within its min takes only pods of other leaves, and only as long as each of
 *       those leaves stays at or above its min once they have gone: its min is what others
 *       borrow, so its own pods are never evicted to give it back (capacity scheduling picks its
 *       victims among the quotas above their min alone).
 *   <li>A preemptor of a namespace no leaf names may take pods of leaves that keep their min.
 *   <li>With the victims gone and the pod placed, every node on the preemptor's path stays within
 *       max: an eviction for a pod quota would refuse anyway frees nothing.
 * </ul>
 * Victims of namespaces no leaf names have no quota to keep. Reclaim ({@link ReclaimPlanner}) is
 * the other way a team gets its min back, whatever the priorities.
 */
public final class PreemptionUnderQuota {
  private PreemptionUnderQuota() {}

  /**
   * Why {@code victims} may not be evicted for a pod of {@code namespace} asking {@code ask}
   * (in the tree's resources), counted on {@code book} (without the preemptor); empty when they may.
   */
  public static Optional<String> refusal(QuotaBook book, String namespace, QuotaResources ask, Collection<QuotaPod> victims) {
    var tree = book.tree();
    var leaf = tree.leafOf(namespace);
    var taken = new IdentityHashMap<QuotaNode, QuotaResources>();
    for (var victim : victims) {
      tree.leafOf(victim.namespace()).ifPresent(l -> taken.merge(l, victim.ask(), QuotaResources::add));
    }
    var borrows = leaf.isPresent() && !book.used(leaf.get()).add(ask).fitsWithin(leaf.get().min());
    for (var entry : taken.entrySet()) {
      var victimLeaf = entry.getKey();
      if (leaf.isPresent() && victimLeaf == leaf.get()) {
        if (borrows) {
          continue;
        }
        return Optional.of("quota " + leaf.get().name() + " is within its min " + leaf.get().min()
            + " with this pod: it gets GPUs back from teams that borrow, never by preempting its own pods");
      }
      if (borrows) {
        return Optional.of("quota " + leaf.get().name() + " would borrow beyond its min " + leaf.get().min()
            + " with this pod: it may preempt only pods of its own team, not of " + victimLeaf.name());
      }
      var after = book.used(victimLeaf).subtract(entry.getValue());
      for (var resource : entry.getValue().names()) {
        var min = victimLeaf.min().get(resource);
        if (entry.getValue().get(resource) > 0 && after.get(resource) < min) {
          return Optional.of("quota " + victimLeaf.name() + " would fall below its min: " + resource + " used "
              + QuotaResources.format(resource, book.used(victimLeaf).get(resource)) + " - "
              + QuotaResources.format(resource, entry.getValue().get(resource)) + " < min " + QuotaResources.format(resource, min));
        }
      }
    }
    return leaf.flatMap(l -> overMax(book, l, ask, taken));
  }

  private static Optional<String> overMax(QuotaBook book, QuotaNode leaf, QuotaResources ask, Map<QuotaNode, QuotaResources> taken) {
    for (var node : leaf.pathToRoot()) {
      var after = book.usedWithout(node, taken);
      for (var resource : ask.names()) {
        if (ask.get(resource) > 0 && node.max().has(resource) && after.get(resource) + ask.get(resource) > node.max().get(resource)) {
          return Optional.of("quota " + node.name() + ": " + resource + " used " + QuotaResources.format(resource, after.get(resource))
              + " + asked " + QuotaResources.format(resource, ask.get(resource)) + " > max "
              + QuotaResources.format(resource, node.max().get(resource)) + " even with the victims gone");
        }
      }
    }
    return Optional.empty();
  }
}
