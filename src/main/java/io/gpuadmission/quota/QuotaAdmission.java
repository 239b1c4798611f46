package io.gpuadmission.quota;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Whether a pod may be placed as far as quotas go: its leaf and every ancestor stay within max,
 * and a leaf that borrows stays within its fair share of idle capacity.
 *
 * <p>Precisely, with used + ask per resource the ask names (in name order):
 * <ol>
 *   <li>every node on the path, leaf first: used + ask ≤ max (a resource max does not name is not
 *       limited); else refused by the first that would pass it. Max is never passed.
 *   <li>when the leaf stays at or under its min in every resource, admitted: a min is guaranteed,
 *       and no fair share applies to it. (Its own max cannot refuse it, as min ≤ max; an
 *       ancestor's can only when other leaves under that ancestor borrow, and then the refusal says
 *       {@code leafUnderMin} and reclaim takes the borrowed capacity back.)
 *   <li>otherwise every node on the path that would be above its min in a resource stays within its
 *       fair limit there ({@link QuotaBook#fairLimit}); else refused naming the share.
 * </ol>
 * A namespace that no leaf names has no quota: admitted.
 */
public final class QuotaAdmission {
  private QuotaAdmission() {}

  /** The decision for a pod of {@code namespace} asking {@code ask}. */
  public static QuotaDecision admit(QuotaBook book, String namespace, QuotaResources ask) {
    var leaf = book.tree().leafOf(namespace);
    if (leaf.isEmpty()) {
      return new QuotaDecision.Admitted(Optional.empty());
    }
    var path = leaf.get().pathToRoot();
    var underMin = book.used(leaf.get()).add(ask).fitsWithin(leaf.get().min());
    for (var node : path) {
      for (var resource : ask.names()) {
        var used = book.used(node).get(resource);
        var asked = ask.get(resource);
        if (node.max().has(resource) && used + asked > node.max().get(resource)) {
          return refused(node, resource, used, asked, "max " + fmt(resource, node.max().get(resource)), underMin);
        }
      }
    }
    if (underMin) {
      return new QuotaDecision.Admitted(Optional.of(leaf.get().name()));
    }
    for (var node : path) {
      for (var resource : ask.names()) {
        var used = book.used(node).get(resource);
        var asked = ask.get(resource);
        if (asked > 0 && used + asked > node.min().get(resource)) {
          var limit = book.fairLimit(node, resource);
          if (used + asked > limit) {
            var max = node.max().has(resource) ? "max " + fmt(resource, node.max().get(resource)) : "no max";
            var share = "fair share " + fmt(resource, limit) + " of idle capacity (" + max + ")";
            return refused(node, resource, used, asked, share, false);
          }
        }
      }
    }
    return new QuotaDecision.Admitted(Optional.of(leaf.get().name()));
  }

  /** The decision for a gang of {@code namespace}: its members' asks summed, admitted whole or not. */
  public static QuotaDecision admitGang(QuotaBook book, String namespace, Collection<QuotaResources> members) {
    var sum = QuotaResources.NONE;
    for (var member : List.copyOf(members)) {
      sum = sum.add(member);
    }
    return admit(book, namespace, sum);
  }

  private static QuotaDecision refused(
      QuotaNode node, String resource, long used, long asked, String limit, boolean underMin) {
    var reason = "quota " + node.name() + ": " + resource + " used " + fmt(resource, used) + " + asked "
        + fmt(resource, asked) + " > " + limit;
    return new QuotaDecision.Refused(node.name(), reason, underMin);
  }

  private static String fmt(String resource, long amount) {
    return QuotaResources.format(resource, amount);
  }
}
