package io.gpuadmission.policy;

import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.InvalidNullException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Reads a policy document strictly: keys the user leaves out keep the built-in default, while an
 * unknown key, a wrong type or an invalid value is an error naming the key path and its line. Every
 * error of a document is reported, not only the first.
 */
public final class PolicyParser {
  /** Classpath resource holding the built-in default, also shipped in {@code manifests/}. */
  public static final String DEFAULT_RESOURCE = "/policy.yaml";

  private static final ObjectMapper YAML =
      YAMLMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
          .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
          .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
          .defaultSetterInfo(JsonSetter.Value.forValueNulls(Nulls.FAIL))
          .addModule(new Jdk8Module())
          .build();

  private static final String DEFAULT_TEXT = readDefaultText();
  private static final ObjectNode DEFAULT_TREE = (ObjectNode) readTreeUnchecked(DEFAULT_TEXT);
  private static final GpuPolicy BUILT_IN_DEFAULT = parseDefault();

  private PolicyParser() {}

  /** The built-in default policy (the document in {@link #DEFAULT_RESOURCE}). */
  public static GpuPolicy builtInDefault() {
    return BUILT_IN_DEFAULT;
  }

  /** The text of the built-in default document. */
  public static String builtInDefaultText() {
    return DEFAULT_TEXT;
  }

  /** Parses {@code yamlText} over the built-in default. */
  public static GpuPolicy parse(String yamlText) throws InvalidPolicyException {
    var lines = new YamlKeyLines(yamlText);
    JsonNode userTree;
    try {
      refuseAliases(yamlText);
      userTree = YAML.readTree(yamlText);
    } catch (JsonProcessingException e) {
      throw new InvalidPolicyException(List.of(syntaxError(e)));
    }
    if (userTree == null || userTree.isMissingNode() || userTree.isNull()) {
      userTree = YAML.createObjectNode();
    }
    if (!userTree.isObject()) {
      throw new InvalidPolicyException(
          List.of(new PolicyError("", 1, "the policy must be a YAML mapping of keys to values")));
    }
    var merged = DEFAULT_TREE.deepCopy();
    mergeInto(merged, (ObjectNode) userTree);
    PolicyBinding binding;
    try {
      binding = PolicyBinding.bind(YAML, merged, DEFAULT_TREE);
    } catch (JsonProcessingException e) {
      throw new InvalidPolicyException(List.of(new PolicyError("", 0, e.getOriginalMessage())));
    }
    var errors = new ArrayList<PolicyError>();
    for (var failure : binding.failures()) {
      errors.add(new PolicyError(failure.path(), lines.lineOf(failure.path()), describe(failure.error())));
    }
    var policy = binding.policy();
    if (policy != null) {
      for (var finding : PolicyValidator.validate(policy)) {
        var path = binding.asWritten(finding.path());
        // A value set aside may break a rule about its neighbours; its own error already says what to fix.
        if (errors.stream().noneMatch(e -> related(e.path(), path))) {
          errors.add(new PolicyError(path, lines.lineOf(path), finding.message()));
        }
      }
    }
    if (!errors.isEmpty()) {
      errors.sort(Comparator.comparingInt(e -> e.line() > 0 ? e.line() : Integer.MAX_VALUE));
      throw new InvalidPolicyException(errors);
    }
    return policy;
  }

  /**
   * Jackson's tree reader does not resolve YAML aliases ({@code *name}): it would read the alias
   * name as a plain value and report a confusing type error far from the cause. Say what it is.
   */
  private static void refuseAliases(String yamlText) throws JsonProcessingException, InvalidPolicyException {
    try (var parser = (com.fasterxml.jackson.dataformat.yaml.YAMLParser) YAML.getFactory().createParser(yamlText)) {
      while (parser.nextToken() != null) {
        if (parser.isCurrentAlias()) {
          throw new InvalidPolicyException(
              List.of(
                  new PolicyError(
                      "",
                      parser.currentLocation().getLineNr(),
                      "YAML aliases (*" + parser.getText() + ") are not supported in the policy; write the value out"
                          + " where the alias stands")));
        }
      }
    } catch (IOException e) {
      if (e instanceof JsonProcessingException processing) {
        throw processing;
      }
      throw new UncheckedIOException(e);
    }
  }

  /** SnakeYAML knows where and what; Jackson's own message repeats the source excerpt. */
  private static PolicyError syntaxError(JsonProcessingException e) {
    if (e.getCause() instanceof org.yaml.snakeyaml.error.MarkedYAMLException marked) {
      var context = marked.getContext() == null ? "" : marked.getContext() + ": ";
      var mark = marked.getProblemMark();
      return new PolicyError("", mark == null ? 0 : mark.getLine() + 1, "not valid YAML: " + context + marked.getProblem());
    }
    var location = e.getLocation();
    var message = e.getOriginalMessage().strip();
    var newline = message.indexOf('\n');
    return new PolicyError(
        "", location == null ? 0 : location.getLineNr(), "not valid YAML: " + (newline < 0 ? message : message.substring(0, newline)));
  }

  /** Writes {@code policy} as a complete document that parses back to an equal policy. */
  public static String write(GpuPolicy policy) {
    try {
      return YAML.writeValueAsString(policy);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("policy records always serialize", e);
    }
  }

  /** Maps merge key by key; anything else the user wrote (lists, scalars, null) replaces. */
  private static void mergeInto(ObjectNode target, ObjectNode overlay) {
    overlay
        .properties()
        .forEach(
            entry -> {
              var existing = target.get(entry.getKey());
              if (existing instanceof ObjectNode existingObject
                  && entry.getValue() instanceof ObjectNode overlayObject) {
                mergeInto(existingObject, overlayObject);
              } else {
                target.set(entry.getKey(), entry.getValue());
              }
            });
  }

  /** Whether one path is the other or within it. */
  private static boolean related(String a, String b) {
    return a.equals(b) || within(a, b) || within(b, a);
  }

  private static boolean within(String inner, String outer) {
    return inner.length() > outer.length()
        && inner.startsWith(outer)
        && (inner.charAt(outer.length()) == '.' || inner.charAt(outer.length()) == '[');
  }

  private static String describe(JsonMappingException e) {
    if (e instanceof UnrecognizedPropertyException unknown) {
      var known =
          unknown.getKnownPropertyIds().stream().map(Object::toString).sorted().collect(Collectors.joining(", "));
      if ("<<".equals(unknown.getPropertyName())) {
        return "YAML merge keys (<<) are not supported in the policy; write the keys out";
      }
      return "unknown key; known keys here: " + known;
    }
    if (e instanceof InvalidNullException) {
      return "must have a value (null is not allowed here)";
    }
    if (e instanceof InvalidFormatException invalid && invalid.getTargetType().isEnum()) {
      return "\"" + invalid.getValue() + "\" is not one of " + enumNames(invalid.getTargetType());
    }
    if (e instanceof MismatchedInputException mismatched && mismatched.getTargetType() != null) {
      return "expected " + typeName(mismatched.getTargetType());
    }
    return e.getOriginalMessage();
  }

  private static String enumNames(Class<?> enumType) {
    return Arrays.stream(enumType.getEnumConstants())
        .map(
            constant -> {
              try {
                var annotation =
                    enumType
                        .getField(((Enum<?>) constant).name())
                        .getAnnotation(com.fasterxml.jackson.annotation.JsonProperty.class);
                return annotation == null ? constant.toString() : annotation.value();
              } catch (NoSuchFieldException impossible) {
                return constant.toString();
              }
            })
        .collect(Collectors.joining(", ", "[", "]"));
  }

  private static String typeName(Class<?> type) {
    if (type == boolean.class || type == Boolean.class) {
      return "true or false";
    }
    if (type == int.class || type == Integer.class) {
      return "a whole number";
    }
    if (type == double.class || type == Double.class) {
      return "a number";
    }
    if (type == String.class) {
      return "a string";
    }
    if (type.isEnum()) {
      return "one of " + enumNames(type);
    }
    if (java.util.Collection.class.isAssignableFrom(type)) {
      return "a list";
    }
    if (java.util.Map.class.isAssignableFrom(type) || type.isRecord()) {
      return "a mapping of keys to values";
    }
    return "a value of type " + type.getSimpleName();
  }

  private static String readDefaultText() {
    try (InputStream in = PolicyParser.class.getResourceAsStream(DEFAULT_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("built-in policy " + DEFAULT_RESOURCE + " is missing");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonNode readTreeUnchecked(String text) {
    try {
      return YAML.readTree(text);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("built-in policy is not valid YAML", e);
    }
  }

  private static GpuPolicy parseDefault() {
    try {
      return parse(DEFAULT_TEXT);
    } catch (InvalidPolicyException e) {
      throw new IllegalStateException("built-in policy is invalid:\n" + e.getMessage(), e);
    }
  }
}
