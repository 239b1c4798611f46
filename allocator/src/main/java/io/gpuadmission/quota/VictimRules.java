package io.gpuadmission.quota;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/** Which victim sets reclaim may take for one pending pod (see {@link ReclaimPlanner}). */
final class VictimRules {
  private final QuotaBook book;
  private final QuotaNode pendingLeaf;
  private final QuotaResources ask;

  VictimRules(QuotaBook book, QuotaNode pendingLeaf, QuotaResources ask) {
    this.book = book;
    this.pendingLeaf = pendingLeaf;
    this.ask = ask;
  }

  /** Whether the unit frees something the pending pod asks for and may be taken on its own. */
  boolean helps(VictimUnit unit) {
    var frees = unit.members().stream()
        .anyMatch(member -> ask.names().stream().anyMatch(r -> ask.get(r) > 0 && member.pod().ask().get(r) > 0));
    return frees && keepsMins(takenPerLeaf(List.of(unit)));
  }

  /** Whether every victim's leaf keeps its min and the pending pod's path stays within max. */
  boolean allows(VictimSet set) {
    var taken = takenPerLeaf(set.units());
    return keepsMins(taken) && pathWithinMax(taken);
  }

  private Map<QuotaNode, QuotaResources> takenPerLeaf(List<VictimUnit> units) {
    var taken = new IdentityHashMap<QuotaNode, QuotaResources>();
    for (var unit : units) {
      for (var member : unit.members()) {
        var leaf = book.tree().leafOf(member.pod().namespace()).orElseThrow();
        taken.merge(leaf, member.pod().ask(), QuotaResources::add);
      }
    }
    return taken;
  }

  private boolean keepsMins(Map<QuotaNode, QuotaResources> taken) {
    for (var entry : taken.entrySet()) {
      var leaf = entry.getKey();
      for (var resource : ask.names()) {
        var took = entry.getValue().get(resource);
        if (ask.get(resource) > 0 && took > 0
            && (leaf == pendingLeaf || book.used(leaf).get(resource) - took < leaf.min().get(resource))) {
          return false;
        }
      }
    }
    return true;
  }

  private boolean pathWithinMax(Map<QuotaNode, QuotaResources> taken) {
    for (var node : pendingLeaf.pathToRoot()) {
      var after = book.usedWithout(node, taken).add(ask);
      if (!after.withinLimits(node.max())) {
        return false;
      }
    }
    return true;
  }
}
