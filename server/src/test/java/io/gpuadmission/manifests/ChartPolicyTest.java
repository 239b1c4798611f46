package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.gpuadmission.policy.InvalidPolicyException;
import io.gpuadmission.policy.PolicyParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chart refuses at template time a policy the webhook refuses, with the webhook's message: each
 * policy below goes through the webhook's parser and through {@code helm template}, and Helm's error
 * carries every "path: message" the webhook gives.
 */
class ChartPolicyTest {
  @TempDir Path dir;

  @ParameterizedTest
  @ValueSource(
      strings = {
        "version: 2\n",
        "version: 1\nexemptNamespaces: [kube-system, Team_A]\n",
        "version: 1\ntopology:\n  allowedNamespaces: [ml, -ml]\n",
        "version: 1\ntopology:\n  dnsPolicy: Sometimes\n",
        "version: 1\ntopology:\n  jobLabel: gpu-topology-replica\n",
        "version: 1\noptOutLabel: not/a/key\n",
        "version: 1\nnodeLabels:\n  pool: -pool\n",
        "version: 1\ngpuModel:\n  memoryTolerancePercent: 80\n",
        "version: 1\nscheduling:\n  schedulerName: Gpu_Scheduler\n",
        "version: 1\ntopolgy:\n  pool: topology\n",
        "version: 1\ntopology:\n  dnsPolicies: Default\n",
        "version: 1\nallocator:\n  fgdWorkload:\n    window: 5\n",
        "version: 1\nfailureMode:\n  gpuPods: maybe\n",
        "version: 1\ntopology:\n  onConflict: ignore\n",
        "version: 1\nfeasibility:\n  onInfeasible: ignore\n",
        "- version: 1\n",
        "version: 1\nexemptNamespaces: kube-system\n",
        "version: 1\ntopology:\n  hostIPC: [true]\n",
        "version: 1\nallocator:\n  topologies: [a]\n",
        "version: 1\ntopology: on\n",
      })
  void aPolicyTheWebhookRefusesFailsHelmTemplateWithItsMessage(String policy) throws Exception {
    var webhook = webhookErrors(policy);
    assertThat(webhook).as("the webhook refuses it").isNotEmpty();

    var result = Chart.templateResult(List.of(), "--set-file", "policy=" + write(policy));

    assertThat(result.exit()).isNotZero();
    assertThat(result.error()).contains("policy: the webhook would refuse it (docs/policy.md):");
    for (var error : webhook) {
      assertThat(result.error()).contains(error);
    }
  }

  @Test
  void aPolicyTheWebhookAcceptsIsRenderedVerbatim() throws Exception {
    // With its own exempt namespaces (one without them gets the release's: ChartNamespaceTest).
    var policy = "# ours\nversion: 1\nexemptNamespaces: [kube-system]\ntopology:\n  dnsPolicy: Default\nscheduling:\n  schedulerName: gpu-scheduler\n";
    assertThat(webhookErrors(policy)).isEmpty();

    var objects = Overlays.objects(Chart.template(List.of(), "--set-file", "policy=" + write(policy)));

    var configMap = (ConfigMap) RenderedObjects.find(objects, "ConfigMap", "gpu-admission", "gpu-admission-policy");
    assertThat(configMap.getData()).containsExactly(java.util.Map.entry("policy.yaml", policy));
  }

  /** Broken YAML: both say so (in their YAML parsers' words, which differ). */
  @Test
  void aPolicyThatIsNotYamlFailsHelmTemplateAndUpgrade() throws Exception {
    var policy = "version: 1\nfailureMode: {gpuPods: closed\n";
    assertThat(webhookErrors(policy)).singleElement().asString().startsWith("not valid YAML: ");

    for (var upgrade : List.of(false, true)) {
      var file = "policy=" + write(policy);
      var result = upgrade ? Chart.templateResult(List.of(), "--is-upgrade", "--set-file", file) : Chart.templateResult(List.of(), "--set-file", file);
      assertThat(result.exit()).isNotZero();
      assertThat(result.error()).contains("policy: the webhook would refuse it (docs/policy.md):\nnot valid YAML: ");
    }
  }

  /**
   * helm upgrade refuses such a policy whatever policyOnUpgrade says: with keep, the cluster's
   * policy is written back, and the values' policy would otherwise be stored in the release unchecked.
   */
  @Test
  void anUpgradeRefusesAPolicyTheWebhookRefusesUnderEveryPolicyOnUpgrade() throws Exception {
    var schema = new com.fasterxml.jackson.databind.ObjectMapper().readTree(Chart.file("values.schema.json"));
    var modes = new java.util.ArrayList<String>();
    schema.path("properties").path("policyOnUpgrade").path("enum").forEach(mode -> modes.add(mode.asText()));
    assertThat(modes).containsExactlyInAnyOrder("keep", "replace");
    var bad = write("version: 1\ntopolgy:\n  pool: topology\n");

    for (var mode : modes) {
      var refused = Chart.templateResult(List.of("policyOnUpgrade=" + mode), "--is-upgrade", "--set-file", "policy=" + bad);
      assertThat(refused.exit()).as(mode).isNotZero();
      assertThat(refused.error()).as(mode).contains("policy: the webhook would refuse it (docs/policy.md):\ntopolgy: unknown key; known keys here: allocator,");
      var scheduler = Chart.templateResult(List.of("policyOnUpgrade=" + mode, "scheduler.enabled=true", "policy=version: 1"), "--is-upgrade");
      assertThat(scheduler.exit()).as(mode).isNotZero();
      assertThat(scheduler.error()).as(mode).contains("scheduling.schedulerName must be gpu-scheduler");
    }
  }

  /** With no policy given, the manifests' policy: the built-in default, or the scheduler's. */
  @Test
  void noPolicyMeansTheManifestsPolicy() throws Exception {
    var base = (ConfigMap) RenderedObjects.find(Overlays.renderObjects("manifests"), "ConfigMap", "gpu-admission", "gpu-admission-policy");
    var chart = (ConfigMap) RenderedObjects.find(Overlays.objects(Chart.template(List.of())), "ConfigMap", "gpu-admission", "gpu-admission-policy");
    assertThat(chart.getData()).isEqualTo(base.getData());
  }

  /** "path: message", as the webhook words each error (the chart cannot know YAML line numbers). */
  private static List<String> webhookErrors(String policy) {
    try {
      PolicyParser.parse(policy);
      return List.of();
    } catch (InvalidPolicyException e) {
      return e.errors().stream().map(error -> (error.path().isEmpty() ? "" : error.path() + ": ") + error.message()).toList();
    }
  }

  private String write(String policy) throws java.io.IOException {
    var file = dir.resolve("policy.yaml");
    Files.writeString(file, policy);
    return file.toString();
  }
}
