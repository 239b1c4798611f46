package io.gpuadmission.node.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * JSON to Jackson trees and back with Jackson's streaming parser and generator only: an {@code
 * ObjectMapper} would load databind's serializers, deserializers and type introspection (~370
 * classes: 5,653 against 5,283 loaded by the agent) to read into the same tree.
 */
public final class Json {
  private static final JsonFactory FACTORY = new JsonFactory();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private Json() {}

  /** The tree of one JSON document; throws {@link com.fasterxml.jackson.core.JsonProcessingException} for anything else. */
  public static JsonNode read(String text) throws IOException {
    try (var parser = FACTORY.createParser(text)) {
      return document(parser);
    }
  }

  public static JsonNode read(InputStream in) throws IOException {
    try (var parser = FACTORY.createParser(in)) {
      return document(parser);
    }
  }

  public static ObjectNode object() {
    return NODES.objectNode();
  }

  /** Compact JSON text of {@code tree}. */
  public static String write(JsonNode tree) {
    var out = new StringWriter();
    try (var generator = FACTORY.createGenerator(out)) {
      write(tree, generator);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString();
  }

  private static JsonNode document(JsonParser parser) throws IOException {
    var token = parser.nextToken();
    if (token == null) {
      return NODES.missingNode();
    }
    var tree = value(parser, token);
    if (parser.nextToken() != null) {
      throw new com.fasterxml.jackson.core.JsonParseException(parser, "more than one JSON value");
    }
    return tree;
  }

  private static JsonNode value(JsonParser parser, JsonToken token) throws IOException {
    return switch (token) {
      case START_OBJECT -> {
        var object = NODES.objectNode();
        for (var t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
          var name = parser.currentName();
          object.set(name, value(parser, parser.nextToken()));
        }
        yield object;
      }
      case START_ARRAY -> {
        ArrayNode array = NODES.arrayNode();
        for (var t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
          array.add(value(parser, t));
        }
        yield array;
      }
      case VALUE_STRING -> NODES.textNode(parser.getText());
      // As databind reads them: int, long or big integer by size; doubles.
      case VALUE_NUMBER_INT -> switch (parser.getNumberType()) {
        case INT -> NODES.numberNode(parser.getIntValue());
        case LONG -> NODES.numberNode(parser.getLongValue());
        default -> NODES.numberNode(parser.getBigIntegerValue());
      };
      case VALUE_NUMBER_FLOAT -> NODES.numberNode(parser.getDoubleValue());
      case VALUE_TRUE -> NODES.booleanNode(true);
      case VALUE_FALSE -> NODES.booleanNode(false);
      case VALUE_NULL -> NODES.nullNode();
      default -> throw new com.fasterxml.jackson.core.JsonParseException(parser, "unexpected " + token);
    };
  }

  private static void write(JsonNode node, JsonGenerator out) throws IOException {
    switch (node.getNodeType()) {
      case OBJECT -> {
        out.writeStartObject();
        for (var field : node.properties()) {
          out.writeFieldName(field.getKey());
          write(field.getValue(), out);
        }
        out.writeEndObject();
      }
      case ARRAY -> {
        out.writeStartArray();
        for (var item : node) {
          write(item, out);
        }
        out.writeEndArray();
      }
      case STRING -> out.writeString(node.textValue());
      case NUMBER -> {
        if (node.isIntegralNumber()) {
          out.writeNumber(node.bigIntegerValue());
        } else {
          out.writeNumber(node.doubleValue());
        }
      }
      case BOOLEAN -> out.writeBoolean(node.booleanValue());
      default -> out.writeNull();
    }
  }
}
