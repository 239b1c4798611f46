package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What is wrong with a JSON body, in the terms of the body rather than of the Java types it was
 * read into: where ({@code Pod.spec.containers[0].ports}), what was expected there (an object, an
 * integer, one of the values of an enumeration) and what came, and at which line and column.
 */
public final class JsonProblem {
  private static final Pattern SOURCE = Pattern.compile("\\[Source: .*?; line: (\\d+), column: (\\d+)\\]", Pattern.DOTALL);
  /** How Jackson's message names the value that came: {@code from Array value}, {@code from String value ('x')}. */
  private static final Pattern FROM = Pattern.compile("from ([A-Z][\\w-]*) value(?: \\('(.*?)'\\)| \\(([-+.\\w]+)\\))?");
  private static final Pattern JAVA_TYPE = Pattern.compile("`(?:[a-zA-Z_][\\w]*\\.)*([\\w$]+)`");

  private JsonProblem() {}

  /**
   * Says what is wrong, {@code whole} naming what the body as a whole should be (such as {@code
   * "an ExtenderArgs object"}); {@code root} is the path's first part, or empty.
   */
  public static String describe(JsonProcessingException e, String whole, String root) {
    return describe(e, whole, root, true);
  }

  /**
   * {@link #describe(JsonProcessingException, String, String)}, with the line and column only when
   * {@code located} (they count from where the parser began, which is not always the body's start).
   */
  public static String describe(JsonProcessingException e, String whole, String root, boolean located) {
    var syntax = syntaxError(e);
    if (syntax != null) {
      return "not JSON: " + firstLine(syntax.getOriginalMessage()) + (located ? at(syntax.getLocation()) : "");
    }
    var at = located ? at(e.getLocation()) : "";
    var mapping = (JsonMappingException) e;
    var where = path(mapping, root);
    var expected = where.isEmpty() ? whole : expected(mapping);
    if (mapping instanceof InvalidFormatException format) {
      return prefix(where) + "expected " + expected + ", got " + value(format.getValue()) + at;
    }
    var came = mapping instanceof MismatchedInputException ? FROM.matcher(String.valueOf(e.getOriginalMessage())) : null;
    if (came != null && came.find() && expected != null) {
      return prefix(where) + "expected " + expected + ", got " + came(came.group(1), came.group(2) != null ? came.group(2) : came.group(3)) + at;
    }
    return prefix(where) + withoutJavaTypes(firstLine(e.getOriginalMessage())) + at;
  }

  /** Only the location part: {@code " at line L, column C"}, or empty when unknown. */
  public static String at(JsonLocation location) {
    return location == null || location.getLineNr() < 0 ? "" : " at line " + location.getLineNr() + ", column " + location.getColumnNr();
  }

  private static String prefix(String where) {
    return where.isEmpty() ? "" : where + ": ";
  }

  private static String path(JsonMappingException e, String root) {
    var out = new StringBuilder(root);
    for (var step : e.getPath()) {
      if (step.getFieldName() != null) {
        out.append(out.isEmpty() ? "" : ".").append(step.getFieldName());
      } else if (step.getIndex() >= 0) {
        out.append('[').append(step.getIndex()).append(']');
      }
    }
    return e.getPath().isEmpty() ? "" : out.toString();
  }

  /** What a value of the target type looks like in JSON, or null when it cannot be said. */
  private static String expected(JsonMappingException e) {
    Class<?> type =
        e instanceof InvalidFormatException f ? f.getTargetType() : e instanceof MismatchedInputException m ? m.getTargetType() : null;
    if (type == null) {
      return null;
    }
    if (type.isEnum()) {
      return "one of " + Arrays.stream(type.getEnumConstants()).map(c -> "\"" + c + "\"").collect(Collectors.joining(", "));
    }
    if (type == Integer.class || type == int.class || type == Long.class || type == long.class || type == Short.class
        || type == short.class || type == java.math.BigInteger.class) {
      return "an integer";
    }
    if (Number.class.isAssignableFrom(type) || type == double.class || type == float.class) {
      return "a number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (type == String.class || CharSequence.class.isAssignableFrom(type)) {
      return "a string";
    }
    if (type == Quantity.class) {
      return "a quantity (such as 2, 500m or 16Gi)";
    }
    if (type == IntOrString.class) {
      return "an integer or a string";
    }
    if (type.isArray() || Collection.class.isAssignableFrom(type)) {
      return "an array";
    }
    if (Map.class.isAssignableFrom(type)) {
      return "an object";
    }
    return "a" + (startsWithVowel(type.getSimpleName()) ? "n " : " ") + type.getSimpleName() + " object";
  }

  private static boolean startsWithVowel(String word) {
    return !word.isEmpty() && "AEIOU".indexOf(Character.toUpperCase(word.charAt(0))) >= 0;
  }

  /** A JSON value as Jackson's message names its kind ("Array", "String", ...), and its text when given. */
  private static String came(String kind, String text) {
    return switch (kind) {
      case "Array" -> "an array";
      case "Object" -> "an object";
      case "String" -> text == null ? "a string" : "the string " + quoted(text);
      case "Integer", "Floating-point", "Number" -> text == null ? "a number" : "the number " + text;
      case "Boolean" -> text == null ? "true or false" : text;
      case "Null" -> "null";
      default -> "a value";
    };
  }

  /** The syntax error under {@code e} (the body is not JSON), or null when the JSON itself is fine. */
  private static JsonProcessingException syntaxError(Throwable e) {
    for (var cause = e; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
      if (cause instanceof StreamReadException read && !(cause instanceof JsonMappingException)) {
        return read;
      }
    }
    return e instanceof JsonMappingException ? null : (JsonProcessingException) e;
  }

  private static String value(Object value) {
    return value instanceof String s ? "the string " + quoted(s) : value == null ? "null" : String.valueOf(value);
  }

  private static String quoted(String text) {
    return "\"" + (text.length() <= 60 ? text : text.substring(0, 57) + "...") + "\"";
  }

  /** Jackson's message with its source locations as line and column and Java types by simple name. */
  private static String withoutJavaTypes(String message) {
    return JAVA_TYPE.matcher(message).replaceAll(m -> {
      var name = m.group(1);
      return name.substring(name.lastIndexOf('$') + 1);
    });
  }

  private static String firstLine(String text) {
    if (text == null) {
      return "";
    }
    var newline = text.indexOf('\n');
    var line = newline < 0 ? text : text.substring(0, newline);
    return SOURCE.matcher(line).replaceAll("line $1, column $2");
  }
}
