package io.gpuadmission.preemption;

import io.gpuadmission.allocator.GpuDevice;
import io.gpuadmission.allocator.NodeGpus;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Which pods to evict on one node so that a GPU ask fits there: kube-scheduler's {@code
 * SelectVictimsOnNode} (remove every pod that may be evicted, check the pod fits, then put back the
 * most important first while it still fits), run on the GPUs instead of on the node's totals.
 *
 * <p>A memory share needs one GPU with enough free memory, and a whole GPU one GPU with nothing on
 * it: each GPU is tried on its own, with only the pods on that GPU as victims, and the GPUs'
 * victim sets are ranked as kube-scheduler ranks candidate nodes ({@link NodeVictims#BETTER_FIRST}).
 * So the victims free one GPU the pod fits on, the fewest and least important there are, never
 * pods on other GPUs. Several whole GPUs (or NVLink-connected ones) need the node's GPUs together:
 * then the node is the scope and {@code nodeFits} (the extender's own filter) judges it.
 */
final class VictimChooser {
  private VictimChooser() {}

  /** The victims of one scope and how many PodDisruptionBudgets they violate, before ranking. */
  private record Scope(List<VictimUnit> victims, int pdbViolations) {}

  /**
   * The best victims on {@code view}'s node for {@code ask}, among {@code units} (pods that may be
   * evicted); {@code claims} are all the GPU claims on the node, {@code gone} the UIDs that are
   * evicted anyway (kube-scheduler's own victims). Empty when no set of them makes room; a choice
   * without victims when the ask fits once {@code gone} have gone.
   */
  static Optional<NodeVictims> choose(
      NodeGpus view,
      Collection<GpuClaim> claims,
      Set<String> gone,
      List<VictimUnit> units,
      GpuAsk ask,
      Predicate<NodeGpus> nodeFits,
      DisruptionBudgets budgets) {
    var used = new long[view.gpus().size()];
    for (var claim : claims) {
      if (!gone.contains(claim.podUid())) {
        add(used, view, claim, 1);
      }
    }
    var best = Optional.<NodeVictims>empty();
    for (var scope : scopes(view, ask)) {
      Predicate<long[]> fits = scope < 0 ? u -> nodeFits.test(withUsed(view, u)) : shareOrWhole(view, ask, scope);
      var chosen = reprieve(view, used, scope < 0 ? units : touching(units, scope), fits, budgets);
      if (chosen.isPresent()) {
        var candidate =
            victims(view.name(), chosen.get(), scope < 0 ? freed(view, chosen.get().victims()) : List.of(scope));
        if (best.isEmpty() || NodeVictims.BETTER_FIRST.compare(candidate, best.get()) < 0) {
          best = Optional.of(candidate);
        }
      }
    }
    return best;
  }

  /** GPU indices to try one by one, or {-1} for the whole node. */
  private static int[] scopes(NodeGpus view, GpuAsk ask) {
    if (ask.kind() == GpuAsk.Kind.WHOLE && (ask.count() > 1 || ask.nvlink())) {
      return new int[] {-1};
    }
    var out = new int[view.gpus().size()];
    for (int g = 0; g < out.length; g++) {
      out[g] = g;
    }
    return out;
  }

  private static Predicate<long[]> shareOrWhole(NodeGpus view, GpuAsk ask, int gpu) {
    var device = view.gpus().get(gpu);
    if (!device.healthy()) {
      return u -> false;
    }
    return ask.kind() == GpuAsk.Kind.SHARE ? u -> device.capacity() - u[gpu] >= ask.memory() : u -> u[gpu] == 0;
  }

  /**
   * Removes every unit of the scope; if the ask then fits, puts units back, each one that still
   * leaves room staying: first those whose eviction would violate a PodDisruptionBudget, then the
   * rest, each group most important first, and last those terminating already (a victim among
   * them costs no eviction, and violates no budget). The others are the victims.
   */
  private static Optional<Scope> reprieve(
      NodeGpus view, long[] used, List<VictimUnit> candidates, Predicate<long[]> fits, DisruptionBudgets budgets) {
    var now = used.clone();
    for (var unit : candidates) {
      add(now, view, unit, -1);
    }
    if (!fits.test(now)) {
      return Optional.empty();
    }
    var ordered = new ArrayList<>(candidates);
    ordered.sort(Comparator.comparing(VictimUnit::terminating).thenComparing(VictimUnit::moreImportantFirst));
    var pods = new ArrayList<PodFacts>();
    ordered.forEach(u -> u.pods().forEach(p -> pods.add(p.facts())));
    var flags = budgets.violating(pods);
    var violating = new HashSet<String>();
    for (int i = 0; i < flags.length; i++) {
      if (flags[i] && !pods.get(i).terminating()) {
        violating.add(pods.get(i).uid());
      }
    }
    var victims = new ArrayList<VictimUnit>();
    for (var pass : List.of(true, false)) {
      for (var unit : ordered) {
        if (unit.pods().stream().anyMatch(p -> violating.contains(p.uid())) != pass) {
          continue;
        }
        add(now, view, unit, 1);
        if (!fits.test(now)) {
          add(now, view, unit, -1);
          victims.add(unit);
        }
      }
    }
    victims.sort(VictimUnit::moreImportantFirst);
    var count = 0;
    for (var unit : victims) {
      for (var pod : unit.pods()) {
        count += violating.contains(pod.uid()) ? 1 : 0;
      }
    }
    return Optional.of(new Scope(victims, count));
  }

  private static List<VictimUnit> touching(List<VictimUnit> units, int gpu) {
    var out = new ArrayList<VictimUnit>();
    for (var unit : units) {
      if (unit.touches(gpu)) {
        out.add(unit);
      }
    }
    return out;
  }

  private static NodeVictims victims(String node, Scope scope, List<Integer> gpus) {
    var pods = new ArrayList<Victim>();
    scope.victims().forEach(u -> pods.addAll(u.pods()));
    return new NodeVictims(node, pods, scope.pdbViolations(), gpus);
  }

  /** The GPUs the victims held (for a node-wide choice). */
  private static List<Integer> freed(NodeGpus view, List<VictimUnit> units) {
    var out = new TreeSet<Integer>();
    for (var unit : units) {
      for (var pod : unit.pods()) {
        for (var g : pod.claim().gpus()) {
          if (g >= 0 && g < view.gpus().size()) {
            out.add(g);
          }
        }
      }
    }
    return List.copyOf(out);
  }

  private static void add(long[] used, NodeGpus view, VictimUnit unit, int sign) {
    for (var pod : unit.pods()) {
      add(used, view, pod.claim(), sign);
    }
  }

  private static void add(long[] used, NodeGpus view, GpuClaim claim, int sign) {
    for (var g : claim.gpus()) {
      if (g >= 0 && g < used.length) {
        used[g] += sign * (claim.whole() ? view.gpus().get(g).capacity() : claim.memory());
      }
    }
  }

  /** The node with {@code used} on its GPUs, held within 0..capacity as the ledger's view is. */
  private static NodeGpus withUsed(NodeGpus view, long[] used) {
    var gpus = new ArrayList<GpuDevice>(used.length);
    for (int g = 0; g < used.length; g++) {
      var device = view.gpus().get(g);
      gpus.add(device.withUsed(Math.max(0, Math.min(device.capacity(), used[g]))));
    }
    return new NodeGpus(view.name(), gpus, view.links(), view.cpuCapacity(), view.cpuFree());
  }
}
