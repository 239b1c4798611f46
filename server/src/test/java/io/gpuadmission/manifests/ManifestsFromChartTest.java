package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * One source of truth: every object file of manifests/ is the chart's template of the same path
 * (charts/gpu-admission/templates/base/rbac.yaml gives manifests/base/rbac.yaml), rendered by {@code
 * helm template} in namespace gpu-admission (a CRD in the chart's crds/ gives manifests/crds/ of the
 * same name), and the chart's files that kubectl users need are
 * copied. Only the kustomizations (which files, which patches) and the overlays' patches are
 * written by hand there; ChartEquivalenceTest checks that they make what the chart makes with the
 * matching values. Regenerate after a template change with {@code -Dmanifests.write=true}.
 */
class ManifestsFromChartTest {
  static final Path MANIFESTS = Path.of("manifests");

  /** templates/base/: the install with default values and its Namespace. */
  static final List<String> BASE = List.of("namespace.create=true");

  /**
   * Every other template, with everything on: cert-manager/ and components/ and control-plane/. The
   * network policy names the API server as the placeholder manifests/ has instead of CIDRs (the
   * schema, which asks for CIDRs, is skipped for this render only).
   */
  static final List<String> EVERYTHING =
      List.of("namespace.create=true", "certificates.mode=cert-manager", "scheduler.enabled=true", "monitoring.enabled=true",
          "nodeAgent.enabled=true", "controlPlane.enabled=true", "networkPolicy.enabled=true", "networkPolicy.apiServerCIDRs={API_SERVER_CIDR}");

  /** Chart files that are not objects but that kubectl users need too: chart path, manifests path. */
  static final Map<String, String> COPIED = Map.of("files/kube-scheduler-config.yaml", "control-plane/kube-scheduler-config.yaml");

  /** A template's path under templates/, or a CRD's under crds/ (Helm's CRD directory, kept as crds/). */
  private static final Pattern SOURCE = Pattern.compile("(?m)^---\\n# Source: gpu-admission/(?:templates/)?(.+)\\n");
  private static final String GENERATED = "# Generated from charts/gpu-admission/";

  @Test
  void everyObjectFileOfManifestsIsTheChartRenderedInNamespaceGpuAdmission() throws Exception {
    var expected = generated();
    if (Boolean.getBoolean("manifests.write")) {
      for (var stale : generatedFilesInManifests()) {
        if (!expected.containsKey(stale)) {
          Files.delete(MANIFESTS.resolve(stale));
        }
      }
      for (var file : expected.entrySet()) {
        Files.createDirectories(MANIFESTS.resolve(file.getKey()).getParent());
        Files.writeString(MANIFESTS.resolve(file.getKey()), file.getValue());
      }
    }
    var differing = new ArrayList<String>();
    for (var file : expected.entrySet()) {
      var path = MANIFESTS.resolve(file.getKey());
      if (!Files.exists(path) || !Files.readString(path).equals(file.getValue())) {
        differing.add(file.getKey());
      }
    }
    assertThat(differing).as("manifests/ files that differ from the chart (regenerate with -Dmanifests.write=true)").isEmpty();
    assertThat(generatedFilesInManifests()).as("generated files in manifests/ whose template is gone").containsExactlyInAnyOrderElementsOf(expected.keySet());
  }

  /** A template's documents go to its file in the order Helm renders them, each comment with its object. */
  @Test
  void splitsHelmsOutputByTemplate() {
    var output = "---\n# Source: gpu-admission/crds/c.yaml\nkind: CustomResourceDefinition\n"
        + "---\n# Source: gpu-admission/templates/base/a.yaml\n# one\nkind: A\n---\n# Source: gpu-admission/templates/hooks/h.yaml\nkind: H\n"
        + "---\n# Source: gpu-admission/templates/base/a.yaml\nkind: B\n";
    assertThat(byTemplate(output))
        .containsExactly(Map.entry("crds/c.yaml", "kind: CustomResourceDefinition"), Map.entry("base/a.yaml", "# one\nkind: A\n---\nkind: B"), Map.entry("hooks/h.yaml", "kind: H"));
  }

  /** manifests/ path to content. */
  static Map<String, String> generated() throws IOException, InterruptedException {
    var files = new TreeMap<String, String>();
    byTemplate(render(BASE, false)).forEach((template, text) -> {
      if (template.startsWith("base/")) {
        files.put(template, header("templates/" + template) + text + "\n");
      }
    });
    byTemplate(render(EVERYTHING, true)).forEach((template, text) -> {
      if (!template.startsWith("base/") && !template.startsWith("hooks/") && !template.startsWith("tests/")) {
        files.put(template, header((template.startsWith("crds/") ? "" : "templates/") + template) + text + "\n");
      }
    });
    for (var copied : COPIED.entrySet()) {
      files.put(copied.getValue(), header(copied.getKey()) + Chart.file(copied.getKey()));
    }
    return files;
  }

  private static String render(List<String> values, boolean placeholders) throws IOException, InterruptedException {
    var result = placeholders ? Chart.templateResult(values, "--include-crds", "--skip-schema-validation") : Chart.templateResult(values, "--include-crds");
    assertThat(result.exit()).as("helm template %s failed:%n%s", values, result.error()).isZero();
    return result.output();
  }

  static Map<String, String> byTemplate(String helmOutput) {
    var templates = new LinkedHashMap<String, String>();
    var matcher = SOURCE.matcher(helmOutput);
    var starts = new ArrayList<int[]>();
    var names = new ArrayList<String>();
    while (matcher.find()) {
      starts.add(new int[] {matcher.start(), matcher.end()});
      names.add(matcher.group(1));
    }
    for (int i = 0; i < names.size(); i++) {
      var end = i + 1 < starts.size() ? starts.get(i + 1)[0] : helmOutput.length();
      var document = helmOutput.substring(starts.get(i)[1], end).strip();
      templates.merge(names.get(i), document, (a, b) -> a + "\n---\n" + b);
    }
    return templates;
  }

  private static String header(String source) {
    return GENERATED + source + " (ManifestsFromChartTest, -Dmanifests.write=true): edit that, not this file.\n";
  }

  private static List<String> generatedFilesInManifests() throws IOException {
    try (var walk = Files.walk(MANIFESTS)) {
      var files = new ArrayList<String>();
      for (var file : walk.filter(Files::isRegularFile).toList()) {
        if (Files.readString(file).startsWith(GENERATED)) {
          files.add(MANIFESTS.relativize(file).toString().replace('\\', '/'));
        }
      }
      return files;
    }
  }
}
