package io.gpuadmission.quota;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongBinaryOperator;

/**
 * Amounts per resource name in canonical units: whole GPUs for {@code nvidia.com/gpu} and
 * {@code aliyun.com/gpu}, GiB for {@code aliyun.com/gpu-mem}, millicores for {@code cpu}, bytes for
 * {@code memory}, a count for any other extended resource. Immutable; names iterate sorted, which
 * is the stable order of every reason this package writes. A name that is absent reads as 0; as a
 * {@code max} it means "no limit" (see {@link #withinLimits}).
 */
public final class QuotaResources {
  /** No resource at all. */
  public static final QuotaResources NONE = new QuotaResources(new TreeMap<>());

  private final Map<String, Long> amounts;

  private QuotaResources(TreeMap<String, Long> amounts) {
    this.amounts = Collections.unmodifiableMap(amounts);
  }

  /** These amounts (canonical units); a negative amount is refused. */
  public static QuotaResources of(Map<String, Long> amounts) {
    var copy = new TreeMap<String, Long>();
    amounts.forEach(
        (name, amount) -> {
          if (amount < 0) {
            throw new IllegalArgumentException(name + " has a negative amount " + amount);
          }
          copy.put(name, amount);
        });
    return new QuotaResources(copy);
  }

  /** One resource. */
  public static QuotaResources of(String name, long amount) {
    return of(Map.of(name, amount));
  }

  /** Two resources. */
  public static QuotaResources of(String name, long amount, String name2, long amount2) {
    return of(Map.of(name, amount, name2, amount2));
  }

  /**
   * The canonical amount of a quantity of {@code resource} (as KubeQuantity parses it): millicores
   * for cpu, bytes for memory, GiB for GPU memory, a count otherwise; a fraction is rounded up, as
   * kube-scheduler rounds a request.
   */
  public static long canonical(String resource, BigDecimal quantity) {
    return QuotaUnits.canonical(resource, quantity);
  }

  /** The amount of {@code resource}, 0 when absent. */
  public long get(String resource) {
    return amounts.getOrDefault(resource, 0L);
  }

  /** Whether {@code resource} is named (even with 0). */
  public boolean has(String resource) {
    return amounts.containsKey(resource);
  }

  /** The names, sorted. */
  public Set<String> names() {
    return amounts.keySet();
  }

  /** The amounts, sorted by name. */
  public Map<String, Long> asMap() {
    return amounts;
  }

  /** Whether every amount is 0. */
  public boolean isZero() {
    return amounts.values().stream().allMatch(amount -> amount == 0);
  }

  /** The sum per resource (names of both). */
  public QuotaResources add(QuotaResources other) {
    return combine(other, Math::addExact);
  }

  /** This minus {@code other} per resource, at least 0 (usage never reads negative). */
  public QuotaResources subtract(QuotaResources other) {
    return combine(other, (a, b) -> Math.max(0, a - b));
  }

  /** The smaller amount per resource (names of both, an absent one reading 0). */
  public QuotaResources min(QuotaResources other) {
    return combine(other, Math::min);
  }

  /** Whether every amount here is at most {@code other}'s, an absent one there reading 0. */
  public boolean fitsWithin(QuotaResources other) {
    return amounts.entrySet().stream().allMatch(e -> e.getValue() <= other.get(e.getKey()));
  }

  /**
   * Whether every amount here is at most {@code limits}' where limits names it; a resource limits
   * does not name is not limited ({@code max} semantics).
   */
  public boolean withinLimits(QuotaResources limits) {
    return amounts.entrySet().stream()
        .allMatch(e -> !limits.has(e.getKey()) || e.getValue() <= limits.get(e.getKey()));
  }

  /** {@code nvidia.com/gpu=4, memory=16Gi}: each amount in Kubernetes quantity form. */
  @Override
  public String toString() {
    var text = new StringBuilder();
    amounts.forEach(
        (name, amount) ->
            text.append(text.isEmpty() ? "" : ", ").append(name).append('=').append(format(name, amount)));
    return text.toString();
  }

  /** {@code amount} of {@code resource} as a Kubernetes quantity: 500m, 2, 16Gi, 8. */
  public static String format(String resource, long amount) {
    return QuotaUnits.format(resource, amount);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof QuotaResources that && amounts.equals(that.amounts);
  }

  @Override
  public int hashCode() {
    return amounts.hashCode();
  }

  private QuotaResources combine(QuotaResources other, LongBinaryOperator op) {
    var sum = new TreeMap<String, Long>();
    for (var name : amounts.keySet()) {
      sum.put(name, op.applyAsLong(get(name), other.get(name)));
    }
    for (var name : other.names()) {
      sum.putIfAbsent(name, op.applyAsLong(0, other.get(name)));
    }
    return new QuotaResources(sum);
  }

  static BigDecimal ceil(BigDecimal value) {
    return value.setScale(0, RoundingMode.CEILING);
  }
}
