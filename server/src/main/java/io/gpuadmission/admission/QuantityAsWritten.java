package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.fabric8.kubernetes.api.model.Quantity;
import java.io.IOException;

/**
 * Reads a quantity as fabric8 does, except that a string fabric8's own parser throws on ({@code
 * "1e3k"}) is kept as written instead of failing the whole object: {@code pod/QuantitySyntax} then
 * refuses it in the project's words, as it refuses {@code "lots"}, which fabric8 keeps as written.
 * Every mapper that reads pods or nodes from a client takes it ({@link KubernetesJson}, the
 * extender's codec), and then refuses with {@code QuantitySyntax} what it kept.
 */
public final class QuantityAsWritten extends JsonDeserializer<Quantity> {
  /** Put on {@link Quantity} as a Jackson mix-in: a mix-in's annotation replaces the class's own deserializer. */
  @JsonDeserialize(using = QuantityAsWritten.class)
  public abstract static class MixIn {}

  @Override
  public Quantity deserialize(JsonParser parser, DeserializationContext context) throws IOException {
    JsonNode node = parser.readValueAsTree();
    var amount = node.get("amount");
    var format = node.get("format");
    var text = amount == null ? node.asText() : amount.asText();
    try {
      return amount != null && format != null ? new Quantity(text, format.asText()) : new Quantity(text);
    } catch (IllegalArgumentException notFabric8sGrammar) {
      return new Quantity(text, null);
    }
  }
}
