package io.gpuadmission.cli;

import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.InvalidPolicyException;
import io.gpuadmission.policy.PolicyError;
import io.gpuadmission.policy.PolicyParser;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * A policy as a file holds it: the policy document itself, or a ConfigMap manifest (the one the
 * webhook reads, else the only ConfigMap in the file) with the document under the policy key.
 * Knows where the document's lines are in the file, so an error points at the file's own line.
 *
 * @param configMap the ConfigMap's namespace and name when the file is one ("" when it names no
 *     namespace), empty for a bare policy document
 * @param text the policy document, null when the ConfigMap has no policy key
 */
record PolicyFile(String file, Optional<List<String>> configMap, String text, int firstLine, boolean lineByLine) {

  /** Reads {@code file}; bad input when it cannot be read at all. */
  static PolicyFile read(String file, String key, String configMapName) {
    String content;
    try {
      content = Utf8Text.decode(Files.readAllBytes(Path.of(file)));
    } catch (Utf8Text.NotText e) {
      throw new BadInputException(file + ": " + e.getMessage());
    } catch (NoSuchFileException e) {
      throw new BadInputException(file + ": no such file or directory");
    } catch (IOException e) {
      throw new BadInputException(file + ": cannot be read (" + (Files.isDirectory(Path.of(file)) ? "a directory" : e.getClass().getSimpleName()) + ")");
    }
    var configMap = configMap(content, configMapName);
    if (configMap.isEmpty()) {
      return new PolicyFile(file, Optional.empty(), content, 1, true);
    }
    var map = configMap.get();
    var value = node(mapping(map, "data"), key);
    var id = List.of(scalar(node(mapping(map, "metadata"), "namespace")), scalar(node(mapping(map, "metadata"), "name")));
    if (!(value instanceof ScalarNode text)) {
      return new PolicyFile(file, Optional.of(id), null, 0, false);
    }
    // A block scalar's text starts on the line after its | or >; a plain or quoted one on its own line.
    var block = text.getScalarStyle() == DumperOptions.ScalarStyle.LITERAL || text.getScalarStyle() == DumperOptions.ScalarStyle.FOLDED;
    var start = text.getStartMark().getLine() + 1 + (block ? 1 : 0);
    return new PolicyFile(file, Optional.of(id), text.getValue(), start, text.getScalarStyle() == DumperOptions.ScalarStyle.LITERAL);
  }

  /** The policy this file holds; bad input, one line per error, when it is not valid. */
  GpuPolicy policy(String key) {
    if (text == null) {
      throw new BadInputException(file + ": the ConfigMap has no key " + key);
    }
    try {
      return PolicyParser.parse(text);
    } catch (InvalidPolicyException e) {
      var problems = new ArrayList<String>();
      e.errors().forEach(error -> problems.add(located(error) + ": policy is not valid: " + describe(error)));
      throw new BadInputException(problems);
    }
  }

  /** {@code FILE:LINE} of an error in the document (the file's own line), or {@code FILE}. */
  String located(PolicyError error) {
    return error.line() > 0 && (lineByLine || error.line() == 1) ? file + ":" + (firstLine + error.line() - 1) : file;
  }

  /** The error without its document line (the location says where): {@code key.path: message}. */
  static String describe(PolicyError error) {
    return error.path().isEmpty() ? error.message() : error.path() + ": " + error.message();
  }

  /** The ConfigMap in {@code content}: the one named {@code name}, else the only one; empty for a policy document. */
  private static Optional<MappingNode> configMap(String content, String name) {
    var maps = new ArrayList<MappingNode>();
    try {
      for (Node document : new org.yaml.snakeyaml.Yaml(new LoaderOptions()).composeAll(new StringReader(content))) {
        if (document instanceof MappingNode mapping && "ConfigMap".equals(scalar(node(mapping, "kind")))) {
          maps.add(mapping);
        }
      }
    } catch (RuntimeException notYaml) {
      return Optional.empty(); // the policy parser says what is wrong with it
    }
    return maps.stream().filter(m -> name.equals(scalar(node(mapping(m, "metadata"), "name")))).findFirst()
        .or(() -> maps.size() == 1 ? Optional.of(maps.get(0)) : Optional.empty());
  }

  private static Node node(Node node, String key) {
    if (node instanceof MappingNode mapping) {
      Node found = null;
      for (var tuple : mapping.getValue()) {
        if (tuple.getKeyNode() instanceof ScalarNode k && k.getValue().equals(key)) {
          found = tuple.getValueNode(); // the last of repeated keys, as a tree keeps it
        }
      }
      return found;
    }
    return null;
  }

  private static MappingNode mapping(Node node, String key) {
    return node(node, key) instanceof MappingNode m ? m : null;
  }

  private static String scalar(Node node) {
    return node instanceof ScalarNode s ? s.getValue() : "";
  }
}
