package io.gpuadmission.policy;

import java.io.StringReader;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Finds the line of a key path in the text the user wrote. Jackson reports errors against the
 * merged tree, which has no positions, so the path is looked up again in SnakeYAML's node tree.
 */
final class YamlKeyLines {
  private static final Pattern SEGMENT = Pattern.compile("([^.\\[\\]]+)|\\[(\\d+)]");
  private final Node root;

  YamlKeyLines(String yamlText) {
    Node composed;
    try {
      composed = new Yaml(new LoaderOptions()).compose(new StringReader(yamlText));
    } catch (RuntimeException unparsable) {
      composed = null;
    }
    this.root = composed;
  }

  /**
   * The 1-based line of the deepest part of {@code path} the text has (the key's line for a map
   * entry, the item's line for a list entry), 0 when the text has none of it.
   */
  int lineOf(String path) {
    var node = root;
    var line = 0;
    var matcher = SEGMENT.matcher(path);
    while (node != null && matcher.find()) {
      Node next = null;
      if (matcher.group(1) != null && node instanceof MappingNode mapping) {
        for (var tuple : mapping.getValue()) {
          if (tuple.getKeyNode() instanceof ScalarNode key && key.getValue().equals(matcher.group(1))) {
            next = tuple.getValueNode();
            line = key.getStartMark().getLine() + 1;
          }
        }
      } else if (matcher.group(2) != null && node instanceof SequenceNode sequence) {
        var index = Integer.parseInt(matcher.group(2));
        if (index < sequence.getValue().size()) {
          next = sequence.getValue().get(index);
          line = next.getStartMark().getLine() + 1;
        }
      }
      node = next;
    }
    return line;
  }
}
