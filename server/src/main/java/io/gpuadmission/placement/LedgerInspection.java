package io.gpuadmission.placement;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The ledger as {@code /extender/inspect} shows it, in the keys of gpushare's inspect ({@code
 * nodes}, {@code totalGPU}, {@code usedGPU}, {@code devs}, {@code pods}; memory in GiB) plus the
 * model, health and how sure each claim is. Used memory is not capped: an over-committed GPU shows
 * as used above total. A GPU the node no longer has (relabelled to fewer GPUs) while pods still
 * hold it is listed as {@code missing}, with no memory of its own and its pods counted, so the
 * node's used memory shows above its total.
 */
public final class LedgerInspection {
  private LedgerInspection() {}

  /** The whole cluster. */
  public record Cluster(List<Node> nodes) {}

  /** One node; {@code overcommittedGPUs}: its GPUs held beyond what they have (see {@link Device#overcommitted}). */
  public record Node(String name, String model, long totalGPU, long usedGPU, int overcommittedGPUs, List<Device> devs) {}

  /**
   * One GPU of a node. {@code missing}: the node no longer has it, yet pods hold it. {@code
   * overcommitted}: held beyond what it has (a missing GPU with pods, more memory claimed than it
   * has, or a whole-GPU claim beside another claim); the extender never does this itself: the
   * node changed under running pods, or something else placed them.
   */
  public record Device(int id, long totalGPU, long usedGPU, boolean healthy, boolean missing, boolean overcommitted, List<PodUse> pods) {}

  /** A pod's use of one GPU; {@code phase}: PLANNED, CHOSEN, RESERVED, ASSUMED or BOUND. */
  public record PodUse(String namespace, String name, long usedGPU, String phase) {}

  public static Cluster of(GpuLedger ledger) {
    var nodes = new ArrayList<Node>();
    for (var name : ledger.nodes()) {
      node(ledger, name).ifPresent(nodes::add);
    }
    return new Cluster(nodes);
  }

  public static Optional<Node> node(GpuLedger ledger, String name) {
    var capacity = ledger.capacity(name);
    if (capacity.isEmpty()) {
      return Optional.empty();
    }
    var sick = ledger.unhealthy(name);
    var claims = ledger.claimsOn(name);
    var count = capacity.get().count();
    var highest = count - 1;
    for (var claim : claims) {
      for (var g : claim.gpus()) {
        highest = Math.max(highest, g);
      }
    }
    // A whole GPU the node no longer lists is counted as large as its largest GPU (ACK nodes have one model).
    var largest = capacity.get().memory().stream().mapToLong(Long::longValue).max().orElse(0);
    var devs = new ArrayList<Device>();
    long total = 0;
    long used = 0;
    var overcommitted = 0;
    for (int g = 0; g <= highest; g++) {
      var missing = g >= count;
      var size = missing ? 0 : capacity.get().memory().get(g);
      var pods = new ArrayList<PodUse>();
      long onGpu = 0;
      long shared = 0;
      var wholes = 0;
      for (var claim : claims) {
        if (claim.gpus().contains(g)) {
          var amount = claim.whole() ? (missing ? largest : size) : claim.memory();
          onGpu += amount;
          wholes += claim.whole() ? 1 : 0;
          shared += claim.whole() ? 0 : claim.memory();
          var slash = claim.pod().indexOf('/');
          pods.add(new PodUse(claim.pod().substring(0, slash), claim.pod().substring(slash + 1), amount, claim.phase().name()));
        }
      }
      if (missing && pods.isEmpty()) {
        continue; // a GPU the node no longer has and nobody holds: gone
      }
      var over = missing ? !pods.isEmpty() : wholes > 1 || (wholes == 1 && shared > 0) || shared > size;
      devs.add(new Device(g, size, onGpu, !missing && !sick.contains(g), missing, over, pods));
      total += size;
      used += onGpu;
      overcommitted += over ? 1 : 0;
    }
    return Optional.of(new Node(name, capacity.get().model(), total, used, overcommitted, devs));
  }
}
