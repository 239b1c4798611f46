package io.gpuadmission.cli;

import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.cluster.WebhookNamespace;
import io.gpuadmission.policy.PolicyConfig;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code explain}: for every object of the input, what /mutate would change and whether /validate
 * admits it, with the webhook's exact messages, as {@code kubectl apply} of the input would meet them.
 */
@Command(
    name = "explain",
    sortOptions = false,
    mixinStandardHelpOptions = true,
    description = {
      "What the webhook does with each object of the manifests.",
      "%nEach Pod, Deployment, StatefulSet, ReplicaSet, Job, CronJob, PyTorchJob, TFJob and MPIJob (and the policy"
          + " ConfigMap): the patch /mutate sends, its warnings, and /validate's answer, as kubectl apply would meet them."
          + " Objects are judged in the order given, so gang checks see the members before them.%n"
    })
public class ExplainCommand implements Callable<Integer> {
  @Spec CommandSpec spec;
  @Mixin ManifestOptions manifests;
  @Mixin PolicyOption policy;
  @Mixin ClusterOption cluster;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FORMAT",
      defaultValue = "text",
      description = "text (default), json, or yaml: the admitted objects as they would be stored.")
  OutputFormat output;

  private final PolicyConfig policyConfig;
  private final AdmissionMetrics metrics;

  public ExplainCommand(PolicyConfig policyConfig, AdmissionMetrics metrics) {
    this.policyConfig = policyConfig;
    this.metrics = metrics;
  }

  @Override
  public Integer call() {
    var err = spec.commandLine().getErr();
    if (manifests.files.isEmpty()) {
      return Commands.badInput(java.util.List.of("explain needs manifests: -f FILE|DIR|-"), err);
    }
    try {
      var reader = new ManifestReader(System.in);
      var gpuPolicy = policy.load(policyConfig);
      var snapshot = cluster.load(gpuPolicy, reader, err);
      var read = reader.read(manifests.files, manifests.recursive);
      if (read.manifests().isEmpty() && read.problems().isEmpty()) {
        return Commands.badInput(java.util.List.of(String.join(", ", manifests.files) + ": no objects"), err);
      }
      var webhookNamespace = WebhookNamespace.configured(policyConfig);
      var webhook = new LocalWebhook(gpuPolicy, snapshot, policyConfig, webhookNamespace, metrics);
      var explainer =
          new Explainer(webhook, gpuPolicy, snapshot.models(), manifests.namespace, webhookNamespace, policyConfig.configMapName());
      var explanations = read.manifests().stream().map(explainer::explain).toList();
      ExplainReport.write(explanations, read.problems(), output, spec.commandLine().getOut());
      return read.problems().isEmpty() ? ExplainReport.exitCode(explanations) : Commands.badInput(read.problems(), err);
    } catch (BadInputException e) {
      return Commands.badInput(e.problems(), err);
    }
  }
}
