package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import org.junit.jupiter.api.Test;

/**
 * Every CustomResourceDefinition the project ships in a protected API group ({@code k8s.io},
 * {@code kubernetes.io} and their subdomains) carries the approval annotation kube-apiserver demands
 * there: a real API server refuses the CRD without it (the fabric8 mock server does not), and
 * {@code helm install} fails on every cluster. The rule is apiextensions-apiserver's own
 * ({@code apihelpers.GetAPIApprovalState}): a URL with a scheme and a host, or a reason starting
 * with {@code unapproved}. Checked on the chart's {@code crds/}, on what {@code helm template
 * --include-crds} renders with every component on, and on every file under {@code manifests/}.
 */
class ProtectedGroupCrdTest {
  private static final String APPROVAL = "api-approved.kubernetes.io";
  private static final YAMLMapper YAML = new YAMLMapper();

  @Test
  void everyShippedCrdInAProtectedGroupCarriesTheApprovalKubeApiserverDemands() throws Exception {
    var crds = new ArrayList<Found>();
    for (var file : yamlFiles(Chart.DIR.resolve("crds"), Path.of("manifests"))) {
      crds.addAll(crdsIn(file.toString(), Files.readString(file)));
    }
    crds.addAll(crdsIn("helm template --include-crds (every component)", Chart.template(List.of(
        "scheduler.enabled=true", "controlPlane.enabled=true", "monitoring.enabled=true", "nodeAgent.enabled=true",
        "networkPolicy.enabled=true", "networkPolicy.apiServerCIDRs={10.0.0.5/32}"), "--include-crds")));

    // The ElasticQuotaTree CRD, at least, in the chart, in manifests/crds and in the rendered chart.
    assertThat(crds).filteredOn(c -> c.name().equals("elasticquotatrees.scheduling.sigs.k8s.io")).hasSizeGreaterThanOrEqualTo(3);
    for (var crd : crds.stream().filter(c -> protectedGroup(c.group())).toList()) {
      assertThat(approvalProblem(crd.annotations().get(APPROVAL)))
          .as("CRD %s (group %s) in %s: kube-apiserver refuses it", crd.name(), crd.group(), crd.where())
          .isEmpty();
    }
  }

  @Test
  void theRuleIsKubeApiserversOwn() {
    assertThat(protectedGroup("scheduling.sigs.k8s.io")).isTrue();
    assertThat(protectedGroup("k8s.io")).isTrue();
    assertThat(protectedGroup("policy.kubernetes.io")).isTrue();
    assertThat(protectedGroup("kubeflow.org")).isFalse();
    assertThat(protectedGroup("notk8s.io")).isFalse();
    assertThat(approvalProblem(null)).isEqualTo("no annotation " + APPROVAL);
    assertThat(approvalProblem("invalid")).isEqualTo(APPROVAL + " \"invalid\" is neither a URL nor a reason starting with \"unapproved\"");
    assertThat(approvalProblem("https://github.com/kubernetes-sigs/scheduler-plugins/pull/52")).isEmpty();
    assertThat(approvalProblem("unapproved, not reviewed")).isEmpty();
  }

  private record Found(String where, String name, String group, Map<String, String> annotations) {}

  private static boolean protectedGroup(String group) {
    return group.equals("k8s.io") || group.endsWith(".k8s.io") || group.equals("kubernetes.io") || group.endsWith(".kubernetes.io");
  }

  /** Empty when kube-apiserver accepts {@code value} as the approval of a protected group's CRD. */
  private static String approvalProblem(String value) {
    if (value == null || value.isEmpty()) {
      return "no annotation " + APPROVAL;
    }
    if (value.startsWith("unapproved")) {
      return "";
    }
    try {
      var uri = new URI(value);
      if (uri.getScheme() != null && uri.getHost() != null && !uri.getHost().isEmpty()) {
        return "";
      }
    } catch (URISyntaxException notAUrl) {
      // below
    }
    return APPROVAL + " \"" + value + "\" is neither a URL nor a reason starting with \"unapproved\"";
  }

  private static List<Path> yamlFiles(Path... roots) throws IOException {
    var files = new ArrayList<Path>();
    for (var root : roots) {
      try (Stream<Path> walk = Files.walk(root)) {
        walk.filter(p -> p.toString().endsWith(".yaml") || p.toString().endsWith(".yml")).sorted().forEach(files::add);
      }
    }
    assertThat(files).isNotEmpty();
    return files;
  }

  private static List<Found> crdsIn(String where, String text) throws IOException {
    var found = new ArrayList<Found>();
    try (var documents = YAML.readerFor(JsonNode.class).<JsonNode>readValues(text)) {
      for (var object : documents.readAll()) {
        if (object != null && "CustomResourceDefinition".equals(object.path("kind").asText())) {
          var annotations = new java.util.TreeMap<String, String>();
          object.path("metadata").path("annotations").properties().forEach(e -> annotations.put(e.getKey(), e.getValue().asText()));
          found.add(new Found(where, object.path("metadata").path("name").asText(), object.path("spec").path("group").asText(), annotations));
        }
      }
    }
    return found;
  }
}
