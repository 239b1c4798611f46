package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One source of truth: the chart renders manifests/ through its kustomizations, and here {@code helm
 * template} with each documented combination of values gives, object for object and field by field,
 * what {@code kubectl kustomize} gives for the counterpart install. A manifest change the chart
 * does not follow (a new kind of patch, a value it overrides) fails here, naming the field.
 */
class ChartEquivalenceTest {
  private static final YAMLMapper YAML = new YAMLMapper();

  static Stream<Arguments> combinations() throws IOException {
    return Stream.of(
        Arguments.of("manifests", Overlays.helmValues("manifests")),
        Arguments.of("manifests/cert-manager", Overlays.helmValues("manifests/cert-manager")),
        Arguments.of("manifests/scheduler", Overlays.helmValues("manifests/scheduler")),
        Arguments.of("manifests/monitoring", Overlays.helmValues("manifests/monitoring")),
        Arguments.of("manifests/node-agent", Overlays.helmValues("manifests/node-agent")),
        Arguments.of(Overlays.combined(), Overlays.helmValues(Overlays.combined())),
        Arguments.of(withComponents("control-plane", "../../../manifests/control-plane"), List.of("namespace.create=true", "controlPlane.enabled=true")),
        Arguments.of(networkPolicy(), List.of("namespace.create=true", "networkPolicy.enabled=true", "networkPolicy.apiServerCIDRs={10.0.0.5/32,10.0.0.6/32}")));
  }

  @ParameterizedTest(name = "{0} = helm template --set {1}")
  @MethodSource("combinations")
  void chartRendersWhatKustomizeRenders(String dir, List<String> values) throws Exception {
    assertSameObjects(byIdentity(Overlays.render(dir)), byIdentity(Chart.template(values)));
  }

  /** Default values: everything but the Namespace, which `helm install --create-namespace` makes. */
  @Test
  void defaultValuesRenderTheBaseInstallButItsNamespace() throws Exception {
    var kustomize = byIdentity(Overlays.render("manifests"));
    assertThat(kustomize.remove("v1/Namespace//gpu-admission")).isNotNull();
    assertSameObjects(kustomize, byIdentity(Chart.template(List.of())));
  }

  @Test
  void differencesAreReportedFieldByField() {
    var kustomize = new TreeMap<String, JsonNode>(Map.of("apps/v1/Deployment/gpu-admission/gpu-admission", YAML.valueToTree(Map.of("spec", Map.of("replicas", 2, "paused", false)))));
    var helm = new TreeMap<String, JsonNode>(Map.of("apps/v1/Deployment/gpu-admission/gpu-admission", YAML.valueToTree(Map.of("spec", Map.of("replicas", 3)))));
    var differences = new ArrayList<String>();
    kustomize.forEach((id, object) -> diff(id, object, helm.get(id), differences));
    assertThat(differences)
        .containsExactlyInAnyOrder(
            "apps/v1/Deployment/gpu-admission/gpu-admission .spec.paused: kustomize false, helm (missing)",
            "apps/v1/Deployment/gpu-admission/gpu-admission .spec.replicas: kustomize 2, helm 3");
  }

  private static void assertSameObjects(Map<String, JsonNode> kustomize, Map<String, JsonNode> helm) {
    assertThat(helm.keySet()).as("objects (apiVersion/kind/namespace/name)").containsExactlyInAnyOrderElementsOf(kustomize.keySet());
    var differences = new ArrayList<String>();
    kustomize.forEach((id, object) -> diff(id, object, helm.get(id), differences));
    assertThat(differences).as("fields where helm template differs from kubectl kustomize").isEmpty();
  }

  private static void diff(String at, JsonNode kustomize, JsonNode helm, List<String> differences) {
    if (kustomize != null && helm != null && kustomize.isObject() && helm.isObject()) {
      var names = new java.util.TreeSet<String>();
      kustomize.fieldNames().forEachRemaining(names::add);
      helm.fieldNames().forEachRemaining(names::add);
      names.forEach(n -> diff(at + (at.contains(" ") ? "." : " .") + n, kustomize.get(n), helm.get(n), differences));
    } else if (kustomize != null && helm != null && kustomize.isArray() && helm.isArray() && kustomize.size() == helm.size()) {
      for (int i = 0; i < kustomize.size(); i++) {
        diff(at + "[" + i + "]", kustomize.get(i), helm.get(i), differences);
      }
    } else if (kustomize == null || helm == null || !kustomize.equals(helm)) {
      differences.add(at + ": kustomize " + text(kustomize) + ", helm " + text(helm));
    }
  }

  private static String text(JsonNode node) {
    return node == null ? "(missing)" : node.toString();
  }

  static Map<String, JsonNode> byIdentity(String yaml) throws IOException {
    var objects = new TreeMap<String, JsonNode>();
    try (var documents = YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml)) {
      while (documents.hasNext()) {
        var object = documents.next();
        if (object == null || object.isNull() || object.isEmpty()) {
          continue;
        }
        var metadata = object.path("metadata");
        var id = object.path("apiVersion").asText() + "/" + object.path("kind").asText() + "/" + metadata.path("namespace").asText("") + "/" + metadata.path("name").asText();
        assertThat(objects.put(id, object)).as("%s rendered twice", id).isNull();
      }
    }
    return objects;
  }

  /** A kustomization in target/ of the base install plus the given components. */
  static String withComponents(String name, String... components) throws IOException {
    var dir = Path.of("target", "overlays", name);
    Files.createDirectories(dir);
    Files.writeString(
        dir.resolve("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../../../manifests/base\ncomponents:\n"
            + Stream.of(components).map(c -> "- " + c + "\n").reduce("", String::concat));
    return dir.toString();
  }

  /** docs/install.md's network policy: a copy of the component with the API server's CIDRs. */
  static String networkPolicy() throws IOException {
    var component = Path.of("target", "overlays", "network-policy-component");
    Files.createDirectories(component);
    var source = Path.of("manifests", "components", "network-policy");
    Files.copy(source.resolve("kustomization.yaml"), component.resolve("kustomization.yaml"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    Files.writeString(
        component.resolve("networkpolicy.yaml"),
        Files.readString(source.resolve("networkpolicy.yaml"))
            .replace("    - ipBlock:\n        cidr: API_SERVER_CIDR\n", "    - ipBlock:\n        cidr: 10.0.0.5/32\n    - ipBlock:\n        cidr: 10.0.0.6/32\n"));
    return withComponents("network-policy", "../network-policy-component");
  }
}
