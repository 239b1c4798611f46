package io.gpuadmission.quota;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Shares {@code amount} among claimants in proportion to their weights, none above its cap; what a
 * capped claimant cannot take goes to the others (water-filling). Integer shares: the units left by
 * rounding down go one each by largest remainder, then by name, so the result is deterministic.
 * All weights 0 count as equal weights.
 */
final class WaterFill {
  /** One claimant: a name (unique), a weight, and the most it may take. */
  record Claim(String name, long weight, long cap) {}

  private WaterFill() {}

  static Map<String, Long> share(long amount, List<Claim> claims) {
    var shares = new LinkedHashMap<String, Long>();
    claims.forEach(claim -> shares.put(claim.name(), 0L));
    var open = new ArrayList<>(claims.stream().filter(claim -> claim.cap() > 0).toList());
    if (open.stream().allMatch(claim -> claim.weight() == 0)) {
      open.replaceAll(claim -> new Claim(claim.name(), 1, claim.cap()));
    }
    open.removeIf(claim -> claim.weight() == 0);
    var left = amount;
    while (left > 0 && !open.isEmpty()) {
      var total = BigInteger.ZERO;
      for (var claim : open) {
        total = total.add(BigInteger.valueOf(claim.weight()));
      }
      var capped = new ArrayList<Claim>();
      for (var claim : open) {
        if (reachesCap(left, claim, total)) {
          capped.add(claim);
        }
      }
      if (!capped.isEmpty()) {
        for (var claim : capped) {
          shares.put(claim.name(), claim.cap());
          left -= claim.cap();
        }
        open.removeAll(capped);
        continue;
      }
      proportional(left, open, total, shares);
      left = 0;
    }
    return shares;
  }

  private static void proportional(long left, List<Claim> open, BigInteger total, Map<String, Long> shares) {
    var given = 0L;
    var remainders = new LinkedHashMap<Claim, BigInteger>();
    for (var claim : open) {
      var division = BigInteger.valueOf(left).multiply(BigInteger.valueOf(claim.weight())).divideAndRemainder(total);
      shares.put(claim.name(), division[0].longValueExact());
      given += division[0].longValueExact();
      remainders.put(claim, division[1]);
    }
    var byRemainder = new ArrayList<>(open);
    byRemainder.sort(
        Comparator.comparing((Claim claim) -> remainders.get(claim)).reversed().thenComparing(Claim::name));
    // Fewer units left than claimants, and none of them at its cap (it would have been capped).
    for (var i = 0; i < left - given; i++) {
      var claim = byRemainder.get(i);
      shares.merge(claim.name(), 1L, Long::sum);
    }
  }

  private static boolean reachesCap(long left, Claim claim, BigInteger total) {
    // left * weight / total >= cap, without rounding.
    var product = BigInteger.valueOf(left).multiply(BigInteger.valueOf(claim.weight()));
    return product.compareTo(BigInteger.valueOf(claim.cap()).multiply(total)) >= 0;
  }
}
