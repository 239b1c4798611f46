package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/install.md's values reference is generated from the comments of the chart's values.yaml
 * ({@code # -- description} above each value) and must match it; every value has a description.
 * Regenerate: {@code ./mvnw test -Dtest=ChartValuesReferenceTest -Dchart.values.write=true}.
 */
class ChartValuesReferenceTest {
  static final String BEGIN = "<!-- values reference: generated from charts/gpu-admission/values.yaml by ChartValuesReferenceTest -->";
  static final String END = "<!-- end of values reference -->";
  private static final Pattern KEY = Pattern.compile("^( *)([A-Za-z][\\w]*):(?: (.*))?$");

  record Value(String path, String defaultValue, String description) {}

  @Test
  void installPageListsEveryValueWithItsDefaultAndDescription() throws IOException {
    var values = values(Chart.file("values.yaml"));
    assertThat(values).filteredOn(v -> v.description().isEmpty()).as("values without a # -- description").isEmpty();
    assertThat(values).extracting(Value::path).contains("replicas", "certificates.mode", "networkPolicy.apiServerCIDRs", "policyOnUpgrade");

    var page = Path.of("docs", "install.md");
    var text = Files.readString(page);
    var expected = BEGIN + "\n" + table(values) + END;
    if (Boolean.getBoolean("chart.values.write")) {
      text = text.substring(0, text.indexOf(BEGIN)) + expected + text.substring(text.indexOf(END) + END.length());
      Files.writeString(page, text);
    }
    assertThat(text).as("docs/install.md's values reference (regenerate with -Dchart.values.write=true)").contains(expected);
  }

  @Test
  void readsNestedKeysTheirDefaultsAndMultiLineDescriptions() {
    var values = values("# header\n\na:\n  # -- First line\n  # second line.\n  b: \"\"\n# -- Top.\nc: []\nd:\n  e: 1\n");
    assertThat(values).containsExactly(
        new Value("a.b", "\"\"", "First line second line."), new Value("c", "[]", "Top."), new Value("d.e", "1", ""));
  }

  static List<Value> values(String yaml) {
    var result = new ArrayList<Value>();
    var parents = new ArrayDeque<String[]>(); // {indent, key}
    var description = new StringBuilder();
    boolean inDescription = false;
    for (var line : yaml.split("\n", -1)) {
      var stripped = line.strip();
      if (stripped.startsWith("# -- ")) {
        description.setLength(0);
        description.append(stripped.substring(5));
        inDescription = true;
        continue;
      }
      if (stripped.startsWith("#")) {
        if (inDescription) {
          description.append(' ').append(stripped.substring(1).strip());
        }
        continue;
      }
      var key = KEY.matcher(line);
      if (!key.matches()) {
        description.setLength(0);
        inDescription = false;
        continue;
      }
      var indent = key.group(1).length();
      while (!parents.isEmpty() && Integer.parseInt(parents.peek()[0]) >= indent) {
        parents.pop();
      }
      var path = new StringBuilder();
      parents.descendingIterator().forEachRemaining(p -> path.append(p[1]).append('.'));
      path.append(key.group(2));
      if (key.group(3) == null || key.group(3).isBlank()) {
        parents.push(new String[] {String.valueOf(indent), key.group(2)});
      } else {
        result.add(new Value(path.toString(), key.group(3).strip(), description.toString()));
      }
      description.setLength(0);
      inDescription = false;
    }
    return result;
  }

  static String table(List<Value> values) {
    var table = new StringBuilder("| value | default | what it does |\n| --- | --- | --- |\n");
    for (var v : values) {
      table.append("| `").append(v.path()).append("` | `").append(v.defaultValue()).append("` | ")
          .append(v.description().replace("|", "\\|")).append(" |\n");
    }
    return table.toString();
  }
}
