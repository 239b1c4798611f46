package io.gpuadmission.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Reads the YAML and JSON fixtures under src/test/resources. */
public final class Fixtures {
  public static final Path ROOT = Path.of("server/src/test/resources");
  private static final ObjectMapper YAML = new YAMLMapper();

  private Fixtures() {}

  public static Path path(String relative) {
    return ROOT.resolve(relative);
  }

  /** The node agent's fixtures (its module's test resources: its driver table, the pods it records), where its own tests read them. */
  public static Path agentPath(String relative) {
    return Path.of("node-agent/src/test/resources").resolve(relative);
  }

  public static String text(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static JsonNode yamlTree(Path file) {
    try {
      return YAML.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** YAML written in a test, for small variations of a fixture. */
  public static JsonNode yamlTreeOf(String text) {
    try {
      return YAML.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static JsonNode jsonTree(Path file) {
    try {
      return KubernetesJson.mapper().readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A pod as the API server would send it: JSON, with quantities written by fabric8. */
  public static JsonNode podJson(Path file) {
    return canonicalPod(yamlTree(file));
  }

  /** Pod JSON passed through the fabric8 model, so that 1 and "1" compare equal. */
  public static JsonNode canonicalPod(JsonNode tree) {
    var mapper = KubernetesJson.mapper();
    return mapper.valueToTree(mapper.convertValue(tree, Pod.class));
  }

  /** A JSON text parsed to a tree, so that field order and spacing do not matter. */
  public static JsonNode canonicalJson(String json) {
    try {
      return KubernetesJson.mapper().readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static List<Node> nodes(Path file) {
    var list = KubernetesJson.mapper().convertValue(yamlTree(file), KubernetesList.class);
    return list.getItems().stream().map(Node.class::cast).toList();
  }

  public static List<String> lines(Path file) {
    return text(file).lines().filter(l -> !l.isBlank()).toList();
  }
}
