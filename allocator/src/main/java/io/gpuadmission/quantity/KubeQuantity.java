package io.gpuadmission.quantity;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Map;
import java.util.Optional;

/**
 * A resource quantity read as apimachinery's {@code resource.ParseQuantity} reads it: the same
 * strings are valid (its scanner's, not only its documented grammar: {@code "."}, {@code "-"} and
 * {@code "Ki"} are zero, {@code "1.G"} is 10^9) and the same amount comes out (rounded away from
 * zero to 10^-9, binary-suffixed amounts capped at 2^63-1).
 */
public final class KubeQuantity {
  /** Said to whoever wrote a string that is none. */
  public static final String VALID = "a quantity is a number with an optional suffix, such as 2, 500m, 16Gi or 1e3";

  private static final String SUFFIX_LETTERS = "eEinumkKMGTP";
  private static final Map<String, Integer> DECIMAL = Map.of(
      "", 0, "n", -9, "u", -6, "m", -3, "k", 3, "M", 6, "G", 9, "T", 12, "P", 15, "E", 18);
  private static final Map<String, Integer> BINARY = Map.of("Ki", 10, "Mi", 20, "Gi", 30, "Ti", 40, "Pi", 50, "Ei", 60);
  private static final int NANO = 9;
  private static final BigDecimal SMALLEST = BigDecimal.ONE.movePointLeft(NANO);
  private static final BigDecimal BINARY_CAP = BigDecimal.valueOf(Long.MAX_VALUE);

  private KubeQuantity() {}

  /** The amount of {@code text}, or empty when ParseQuantity refuses it. */
  public static Optional<BigDecimal> parse(String text) {
    if (text == null || text.isEmpty()) {
      return Optional.empty();
    }
    var end = text.length();
    var pos = 0;
    var negative = false;
    if (text.charAt(0) == '-' || text.charAt(0) == '+') {
      negative = text.charAt(0) == '-';
      pos++;
    }
    while (pos < end && text.charAt(pos) == '0') {
      pos++;
    }
    var numStart = pos;
    pos = digits(text, pos);
    var num = text.substring(numStart, pos);
    var denom = "";
    if (pos < end && text.charAt(pos) == '.') {
      var denomStart = ++pos;
      pos = digits(text, pos);
      denom = text.substring(denomStart, pos);
    }
    // The suffix: letters of the suffixes, then an optional sign and digits (an exponent).
    var suffixStart = pos;
    while (pos < end && SUFFIX_LETTERS.indexOf(text.charAt(pos)) >= 0) {
      pos++;
    }
    if (pos < end && (text.charAt(pos) == '-' || text.charAt(pos) == '+')) {
      pos++;
    }
    if (digits(text, pos) != end) {
      return Optional.empty();
    }
    var suffix = text.substring(suffixStart);
    var digitsOfNumber = num + denom;
    var unscaled = digitsOfNumber.isEmpty() ? BigInteger.ZERO : new BigInteger(digitsOfNumber);
    var number = new BigDecimal(negative ? unscaled.negate() : unscaled, denom.length());
    if (DECIMAL.containsKey(suffix)) {
      return Optional.of(decimal(number, DECIMAL.get(suffix)));
    }
    if (BINARY.containsKey(suffix)) {
      var amount = roundToNano(new BigDecimal(number.unscaledValue().shiftLeft(BINARY.get(suffix)), number.scale()));
      return Optional.of(amount.abs().compareTo(BINARY_CAP) > 0 ? (negative ? BINARY_CAP.negate() : BINARY_CAP) : amount);
    }
    if (suffix.length() > 1 && (suffix.charAt(0) == 'e' || suffix.charAt(0) == 'E')) {
      try {
        // Go's strconv.ParseInt(s, 10, 64) then int32(...): the same sign rules, the same wrap.
        return Optional.of(decimal(number, (int) Long.parseLong(suffix.substring(1))));
      } catch (NumberFormatException notAnExponent) {
        return Optional.empty();
      }
    }
    return Optional.empty();
  }

  /** Whether ParseQuantity accepts {@code text}. */
  public static boolean isValid(String text) {
    return parse(text).isPresent();
  }

  /**
   * A quantity as a JSON value holds it: Quantity's UnmarshalJSON trims white space (Go's set)
   * around the string before parsing it.
   */
  public static Optional<BigDecimal> parseJsonValue(String text) {
    if (text == null) {
      return Optional.empty();
    }
    int start = 0;
    int end = text.length();
    while (start < end && goSpace(text.charAt(start))) {
      start++;
    }
    while (end > start && goSpace(text.charAt(end - 1))) {
      end--;
    }
    return parse(text.substring(start, end));
  }

  private static BigDecimal decimal(BigDecimal number, int exponent) {
    if (number.signum() == 0) {
      return BigDecimal.ZERO;
    }
    // Below 10^-9 everything is 10^-9 (as apimachinery rounds up); tested before scaling, so a huge
    // negative exponent costs nothing and cannot overflow BigDecimal's scale.
    if ((long) number.precision() - number.scale() + exponent <= -NANO) {
      return number.signum() < 0 ? SMALLEST.negate() : SMALLEST;
    }
    return roundToNano(number.scaleByPowerOfTen(exponent));
  }

  private static BigDecimal roundToNano(BigDecimal amount) {
    return amount.scale() > NANO ? amount.setScale(NANO, RoundingMode.UP) : amount;
  }

  private static int digits(String text, int pos) {
    while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
      pos++;
    }
    return pos;
  }

  /** Go's unicode.IsSpace, which strings.TrimSpace uses. */
  private static boolean goSpace(char c) {
    return switch (c) {
      case '\t', '\n', '\u000B', '\f', '\r', ' ', '\u0085', '\u00A0', '\u1680', '\u2028', '\u2029', '\u202F', '\u205F', '\u3000' -> true;
      default -> c >= '\u2000' && c <= '\u200A';
    };
  }
}
