package io.gpuadmission.manifests;

import static io.gpuadmission.manifests.RenderedObjects.find;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.gpuadmission.policy.PolicyParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chart installs into any namespace (here gpu-system): every namespaced object is in it (the
 * node agent in gpu-system-node, the grants that must be in kube-system there), and everything that
 * names the webhook's namespace names it: the webhooks' Service and exemptions, the certificates'
 * DNS names, RBAC subjects, the policy's exempt namespaces, the second scheduler's extender URL and
 * Lease, the monitoring's server name, the node agent's admission policy, the hooks.
 */
class ChartNamespaceTest {
  private static final String NAMESPACE = "gpu-system";
  private static final String NODE_NAMESPACE = "gpu-system-node";
  /** The only objects outside the release's namespaces: grants to read kube-system's own objects. */
  private static final Set<String> IN_KUBE_SYSTEM =
      Set.of("Role gpu-admission-unhealthy-gpus", "RoleBinding gpu-admission-unhealthy-gpus", "Role gpu-admission-node-agent",
          "RoleBinding gpu-admission-node-agent", "RoleBinding gpu-scheduler-extension-apiserver-authentication-reader",
          "Role gpu-admission-quotas", "RoleBinding gpu-admission-quotas");

  @ParameterizedTest(name = "certificates.mode={0}")
  @ValueSource(strings = {"self-managed", "cert-manager"})
  void everyReferenceToTheWebhooksNamespaceFollowsTheRelease(String mode) throws Exception {
    var yaml = render(List.of("certificates.mode=" + mode, "scheduler.enabled=true", "monitoring.enabled=true", "nodeAgent.enabled=true",
        "controlPlane.enabled=true", "networkPolicy.enabled=true", "networkPolicy.apiServerCIDRs={10.0.0.5/32}", "namespace.create=true"));
    var objects = Overlays.objects(yaml);

    for (var object : objects) {
      var namespace = object.getMetadata().getNamespace();
      var id = object.getKind() + " " + object.getMetadata().getName();
      if (namespace != null && !namespace.equals(NAMESPACE)) {
        assertThat(namespace).as(id).isEqualTo(IN_KUBE_SYSTEM.contains(id) ? "kube-system" : NODE_NAMESPACE);
      }
    }
    assertThat(objects).filteredOn(o -> o.getKind().equals("Namespace")).extracting(o -> o.getMetadata().getName())
        .containsExactlyInAnyOrder(NAMESPACE, NODE_NAMESPACE);
    assertThat(subjects(objects)).isNotEmpty().allSatisfy(s -> assertThat(s.getNamespace()).as(s.getName())
        .isEqualTo(s.getName().equals("gpu-admission-node-agent") ? NODE_NAMESPACE : NAMESPACE));
    assertWebhooksCallAndExemptTheReleaseNamespace(objects);
    assertThat(PolicyParser.parse(policy(objects)).exemptNamespaces()).containsExactly("kube-system", "kube-public", "kube-node-lease", NAMESPACE);

    var webhook = (Deployment) find(objects, "Deployment", NAMESPACE, "gpu-admission");
    var podNamespace = webhook.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
        .filter(e -> e.getName().equals("POD_NAMESPACE")).findFirst().orElseThrow();
    assertThat(podNamespace.getValueFrom().getFieldRef().getFieldPath())
        .as("self-managed certificates name the Service in the pod's own namespace").isEqualTo("metadata.namespace");

    var scheduler = YAML.readTree(((ConfigMap) find(objects, "ConfigMap", NAMESPACE, "gpu-scheduler-config")).getData().get("config.yaml"));
    assertThat(scheduler.path("leaderElection").path("resourceNamespace").asText()).isEqualTo(NAMESPACE);
    assertThat(scheduler.path("extenders").get(0).path("urlPrefix").asText()).isEqualTo("https://gpu-admission-placement.gpu-system.svc:443/extender");
    assertThat(scheduler.path("extenders").get(0).path("tlsConfig").path("serverName").asText()).isEqualTo("gpu-admission.gpu-system.svc");
    assertThat(spec(find(objects, "ServiceMonitor", NAMESPACE, "gpu-admission")).path("endpoints").get(0).path("tlsConfig").path("serverName").asText())
        .isEqualTo("gpu-admission.gpu-system.svc");
    assertThat(spec(find(objects, "ValidatingAdmissionPolicy", null, "gpu-admission-node-agent")).path("matchConditions").get(0).path("expression").asText())
        .isEqualTo("request.userInfo.username == 'system:serviceaccount:gpu-system-node:gpu-admission-node-agent'");
    if (mode.equals("cert-manager")) {
      assertThat(spec(find(objects, "Certificate", NAMESPACE, "gpu-admission-tls")).path("dnsNames")).extracting(JsonNode::asText)
          .containsExactly("gpu-admission", "gpu-admission.gpu-system", "gpu-admission.gpu-system.svc", "gpu-admission.gpu-system.svc.cluster.local");
      for (var kind : List.of("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")) {
        assertThat(find(objects, kind, null, "gpu-admission").getMetadata().getAnnotations())
            .containsEntry("cert-manager.io/inject-ca-from", "gpu-system/gpu-admission-tls");
      }
    }
    // What no structured check above reads (comments, alert texts): the old namespace nowhere as one.
    assertThat(yaml).doesNotContainPattern("namespace: gpu-admission\\s").doesNotContain("gpu-admission.gpu-admission", "gpu-admission/gpu-admission-",
        "-n gpu-admission ", ", gpu-admission]", "serviceaccount:gpu-admission-node:");
  }

  @Test
  void aPolicyOfTheValuesWithoutExemptNamespacesExemptsTheReleaseNamespace(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    var file = dir.resolve("policy.yaml");
    java.nio.file.Files.writeString(file, "quotas:\n  onNeverFits: refuse\n");
    var objects = Overlays.objects(Chart.template(List.of(), "--namespace", NAMESPACE, "--set-file", "policy=" + file));

    var policy = PolicyParser.parse(policy(objects));
    assertThat(policy.exemptNamespaces()).containsExactly("kube-system", "kube-public", "kube-node-lease", NAMESPACE);
    assertThat(policy.quotas().onNeverFits().name()).isEqualToIgnoringCase("refuse");
  }

  /** helm uninstall's and helm test's objects: in the release namespace, the test's grant in tests.namespace only. */
  @ParameterizedTest(name = "tests.namespace={0}")
  @ValueSource(strings = {"default", "ml"})
  void hooksRunInTheReleaseNamespace(String testsNamespace) throws Exception {
    var hooks = Overlays.objects(String.join("\n---\n", Chart.hooks(List.of("tests.namespace=" + testsNamespace), "--namespace", NAMESPACE)));

    assertThat(hooks).hasSize(9);
    for (var hook : hooks) {
      var namespace = hook.getMetadata().getNamespace();
      var id = hook.getKind() + " " + hook.getMetadata().getName();
      if (hook.getKind().startsWith("Cluster")) {
        assertThat(namespace).as(id).isNull();
      } else {
        assertThat(namespace).as(id).isEqualTo(hook.getKind().startsWith("Role") ? testsNamespace : NAMESPACE);
      }
    }
    assertThat(subjects(hooks)).hasSize(2).allSatisfy(s -> assertThat(s.getNamespace()).isEqualTo(NAMESPACE));
    var pod = (ConfigMap) find(hooks, "ConfigMap", NAMESPACE, "gpu-admission-test");
    assertThat(Overlays.objects(pod.getData().get("pod.yaml")).get(0).getMetadata().getNamespace()).isEqualTo(testsNamespace);
  }

  private static final YAMLMapper YAML = new YAMLMapper();

  /** The chart with --namespace gpu-system (the last --namespace given wins over Chart's own). */
  private static String render(List<String> values) throws Exception {
    return Chart.template(values, "--namespace", NAMESPACE);
  }

  private static void assertWebhooksCallAndExemptTheReleaseNamespace(List<HasMetadata> objects) {
    assertThat(RenderedObjects.webhookClientConfigs(objects)).hasSize(6).allSatisfy(c -> assertThat(c.getService().getNamespace()).isEqualTo(NAMESPACE));
    var selectors = new ArrayList<io.fabric8.kubernetes.api.model.LabelSelector>();
    ((MutatingWebhookConfiguration) find(objects, "MutatingWebhookConfiguration", null, "gpu-admission")).getWebhooks().forEach(w -> selectors.add(w.getNamespaceSelector()));
    var validating = ((ValidatingWebhookConfiguration) find(objects, "ValidatingWebhookConfiguration", null, "gpu-admission")).getWebhooks();
    // The quota tree check: ElasticQuotaTrees live in kube-system, whatever the release's namespace.
    assertThat(validating).filteredOn(w -> w.getName().equals("quotas.validate.gpu-admission.io")).singleElement()
        .satisfies(w -> assertThat(w.getNamespaceSelector().getMatchLabels()).containsExactly(java.util.Map.entry("kubernetes.io/metadata.name", "kube-system")));
    validating.stream().filter(w -> !w.getName().equals("quotas.validate.gpu-admission.io")).forEach(w -> selectors.add(w.getNamespaceSelector()));
    assertThat(selectors).hasSize(5).allSatisfy(s -> {
      if (s.getMatchLabels() != null && !s.getMatchLabels().isEmpty()) {
        // The policy check: the policy ConfigMap's namespace only.
        assertThat(s.getMatchLabels()).containsExactly(java.util.Map.entry("kubernetes.io/metadata.name", NAMESPACE));
      } else {
        assertThat(s.getMatchExpressions()).singleElement().satisfies(e -> {
          assertThat(e.getOperator()).isEqualTo("NotIn");
          assertThat(e.getValues()).containsExactly("kube-system", "kube-public", "kube-node-lease", NAMESPACE);
        });
      }
    });
  }

  private static String policy(List<HasMetadata> objects) {
    return ((ConfigMap) find(objects, "ConfigMap", NAMESPACE, "gpu-admission-policy")).getData().get("policy.yaml");
  }

  private static List<Subject> subjects(List<HasMetadata> objects) {
    var subjects = new ArrayList<Subject>();
    for (var object : objects) {
      if (object instanceof RoleBinding binding) {
        subjects.addAll(binding.getSubjects());
      } else if (object instanceof ClusterRoleBinding binding) {
        subjects.addAll(binding.getSubjects());
      }
    }
    return subjects;
  }

  private static JsonNode spec(HasMetadata object) {
    return YAML.valueToTree(object).path("spec");
  }
}
