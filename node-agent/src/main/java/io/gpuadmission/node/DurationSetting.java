package io.gpuadmission.node;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.spi.Converter;

/**
 * A duration setting written as the server's are (Quarkus' grammar): {@code 5} (seconds), {@code
 * 500ms}, {@code 1m30s}, {@code 2d}, or ISO-8601 ({@code PT5S}). The agent has no Quarkus to read
 * them with.
 */
final class DurationSetting implements Converter<Duration> {
  private static final long serialVersionUID = 1L;
  private static final Pattern SECONDS = Pattern.compile("[-+]?\\d+");
  private static final Pattern MILLIS = Pattern.compile("[-+]?\\d+(?i)ms");
  private static final Pattern HOURS_MINUTES_SECONDS = Pattern.compile("(?:[-+]?\\d+(?:\\.\\d+)?(?i)[hms])+");
  private static final Pattern DAYS = Pattern.compile("[-+]?\\d+(?i)d");

  @Override
  public Duration convert(String value) {
    var text = value.trim();
    if (text.isEmpty()) {
      return null;
    }
    if (SECONDS.matcher(text).matches()) {
      return Duration.ofSeconds(Long.parseLong(text));
    }
    if (MILLIS.matcher(text).matches()) {
      return Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)));
    }
    try {
      if (HOURS_MINUTES_SECONDS.matcher(text).matches()) {
        return Duration.parse("PT" + text);
      }
      if (DAYS.matcher(text).matches()) {
        return Duration.parse("P" + text);
      }
      return Duration.parse(text);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(e);
    }
  }
}
