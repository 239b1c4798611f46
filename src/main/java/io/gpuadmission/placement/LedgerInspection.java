package io.gpuadmission.placement;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The ledger as {@code /extender/inspect} shows it, in the keys of gpushare's inspect ({@code
 * nodes}, {@code totalGPU}, {@code usedGPU}, {@code devs}, {@code pods}; memory in GiB) plus the
 * model, health and how sure each claim is. Used memory is not capped: an over-committed GPU shows
 * as used above total.
 */
public final class LedgerInspection {
  private LedgerInspection() {}

  /** The whole cluster. */
  public record Cluster(List<Node> nodes) {}

  /** One node. */
  public record Node(String name, String model, long totalGPU, long usedGPU, List<Device> devs) {}

  /** One GPU of a node. */
  public record Device(int id, long totalGPU, long usedGPU, boolean healthy, List<PodUse> pods) {}

  /** A pod's use of one GPU; {@code phase}: PLANNED, RESERVED, ASSUMED or BOUND. */
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
    var devs = new ArrayList<Device>();
    long total = 0;
    long used = 0;
    for (int g = 0; g < capacity.get().count(); g++) {
      var size = capacity.get().memory().get(g);
      var pods = new ArrayList<PodUse>();
      long onGpu = 0;
      for (var claim : claims) {
        if (claim.gpus().contains(g)) {
          var amount = claim.whole() ? size : claim.memory();
          onGpu += amount;
          var slash = claim.pod().indexOf('/');
          pods.add(new PodUse(claim.pod().substring(0, slash), claim.pod().substring(slash + 1), amount, claim.phase().name()));
        }
      }
      devs.add(new Device(g, size, onGpu, !sick.contains(g), pods));
      total += size;
      used += onGpu;
    }
    return Optional.of(new Node(name, capacity.get().model(), total, used, devs));
  }
}
