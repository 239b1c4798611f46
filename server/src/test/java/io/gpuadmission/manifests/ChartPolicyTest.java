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
    var policy = "# ours\nversion: 1\ntopology:\n  dnsPolicy: Default\nscheduling:\n  schedulerName: gpu-scheduler\n";
    assertThat(webhookErrors(policy)).isEmpty();

    var objects = Overlays.objects(Chart.template(List.of(), "--set-file", "policy=" + write(policy)));

    var configMap = (ConfigMap) RenderedObjects.find(objects, "ConfigMap", "gpu-admission", "gpu-admission-policy");
    assertThat(configMap.getData()).containsExactly(java.util.Map.entry("policy.yaml", policy));
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
