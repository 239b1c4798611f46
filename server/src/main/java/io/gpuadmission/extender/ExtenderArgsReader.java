package io.gpuadmission.extender;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads ExtenderArgs as a token stream: the Pod and (nodeCacheCapable: false) the Nodes through
 * the same mapper as before, NodeNames one string at a time, each found in the {@link
 * NodeNameTable} rather than built again. A 5,000-node request is mostly names, so this is where
 * decoding spends. Only the shape kube-scheduler sends is read here (an object, keys in any
 * case, names as strings or null); for anything else it answers empty and the caller reads the
 * body the general way, whose answer or error then stands unchanged.
 */
final class ExtenderArgsReader {
  /** Bytes a node name takes in the body, about: sizes the list once for real names. */
  private static final int BYTES_PER_NAME = 16;

  private final ObjectMapper mapper;
  private final NodeNameTable names = new NodeNameTable();

  ExtenderArgsReader(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** The arguments, or empty when the body is not of the usual shape. */
  Optional<ExtenderWire.Args> read(byte[] body) {
    try (var parser = mapper.getFactory().createParser(body)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return Optional.empty();
      }
      Pod pod = null;
      NodeList nodes = null;
      List<String> nodeNames = null;
      for (var key = parser.nextFieldName(); key != null; key = parser.nextFieldName()) {
        var value = parser.nextToken();
        if ("Pod".equalsIgnoreCase(key)) {
          pod = value == JsonToken.VALUE_NULL ? null : mapper.readValue(parser, Pod.class);
        } else if ("Nodes".equalsIgnoreCase(key)) {
          nodes = value == JsonToken.VALUE_NULL ? null : mapper.readValue(parser, NodeList.class);
        } else if ("NodeNames".equalsIgnoreCase(key)) {
          nodeNames = value == JsonToken.VALUE_NULL ? null : names(parser, body.length);
          if (value != JsonToken.VALUE_NULL && nodeNames == null) {
            return Optional.empty();
          }
        } else {
          parser.skipChildren();
        }
      }
      if (parser.currentToken() != JsonToken.END_OBJECT) {
        return Optional.empty();
      }
      return Optional.of(new ExtenderWire.Args(pod, nodes, nodeNames));
    } catch (IOException | RuntimeException unusual) {
      return Optional.empty();
    }
  }

  /** The names of a NodeNames array, null when it holds anything but strings and nulls. */
  private List<String> names(JsonParser parser, int bodyLength) throws IOException {
    if (parser.currentToken() != JsonToken.START_ARRAY) {
      return null;
    }
    var list = new ArrayList<String>(bodyLength / BYTES_PER_NAME + 10);
    for (var token = parser.nextToken(); token != JsonToken.END_ARRAY; token = parser.nextToken()) {
      if (token == JsonToken.VALUE_STRING) {
        list.add(names.name(parser.getTextCharacters(), parser.getTextOffset(), parser.getTextLength()));
      } else if (token == JsonToken.VALUE_NULL) {
        list.add(null);
      } else {
        return null;
      }
    }
    return list;
  }
}
