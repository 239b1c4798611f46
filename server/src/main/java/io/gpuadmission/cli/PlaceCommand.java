package io.gpuadmission.cli;

import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.cluster.WebhookNamespace;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.PlacementConfig;
import io.gpuadmission.policy.PolicyConfig;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code place}: where each pending GPU pod of the cluster, and each GPU pod the manifests would
 * create, goes now (node and GPUs), or why nowhere, in the extender's own words.
 */
@Command(
    name = "place",
    sortOptions = false,
    mixinStandardHelpOptions = true,
    description = {
      "Where each GPU pod would go now, or why nowhere.",
      "%nEach pending GPU pod of the cluster given, then each GPU pod the manifests would create: node and GPU indices,"
          + " or why nowhere per node, as the scheduler extender decides (gangs planned whole).%n"
    })
public class PlaceCommand implements Callable<Integer> {
  @Spec CommandSpec spec;
  @Mixin ManifestOptions manifests;
  @Mixin PolicyOption policy;
  @Mixin ClusterOption cluster;

  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text", description = "text (default) or json.")
  OutputFormat output;

  private final PolicyConfig policyConfig;
  private final PlacementConfig placementConfig;
  private final AdmissionMetrics metrics;

  public PlaceCommand(PolicyConfig policyConfig, PlacementConfig placementConfig, AdmissionMetrics metrics) {
    this.policyConfig = policyConfig;
    this.placementConfig = placementConfig;
    this.metrics = metrics;
  }

  @Override
  public Integer call() {
    var err = spec.commandLine().getErr();
    if (cluster.files.isEmpty()) {
      return Commands.badInput(List.of("place needs the cluster: --cluster FILE|DIR (kubectl get nodes,pods -A -o yaml > cluster.yaml)"), err);
    }
    if (output == OutputFormat.yaml) {
      return Commands.badInput(List.of("place writes text or json, not yaml"), err);
    }
    try {
      var reader = new ManifestReader(System.in);
      var gpuPolicy = policy.load(policyConfig);
      var snapshot = cluster.load(gpuPolicy, reader, err);
      var read = manifests.files.isEmpty() ? new ManifestReader.Read(List.of(), List.of()) : reader.read(manifests.files, manifests.recursive);
      var webhookNamespace = WebhookNamespace.configured(policyConfig);
      var webhook = new LocalWebhook(gpuPolicy, snapshot, policyConfig, webhookNamespace, metrics);
      var explainer =
          new Explainer(webhook, gpuPolicy, snapshot.models(), manifests.namespace, webhookNamespace, policyConfig.configMapName());
      var explanations = read.manifests().stream().map(explainer::explain).toList();
      var refused = new ArrayList<PlaceReport.Refused>();
      explanations.stream()
          .filter(e -> e.verdict() == Verdict.REFUSED)
          .forEach(e -> refused.add(new PlaceReport.Refused(e, e.refusal().map(r -> r.getStatus().getMessage()).orElse(""))));
      var clock = Clock.systemUTC();
      var candidates = new ArrayList<Placer.Candidate>();
      var withoutGpus = 0;
      // kubectl apply of a pod that exists updates it (a pod's resources cannot change): it makes
      // no second pod, so the cluster's, or the input's first, is the one placed.
      var existing = new HashSet<String>();
      snapshot.pods().forEach(p -> existing.add(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName()));
      for (var made : PodsOfInput.of(explanations, clock.instant())) {
        var name = made.pod().getMetadata().getNamespace() + "/" + made.pod().getMetadata().getName();
        if (!existing.add(name)) {
          err.println("gpu-admission: note: " + made.from().manifest().source().shortName() + ": pod " + name
              + " exists already (in the cluster or earlier in the input); kubectl apply would update it, not create another: placed once");
          continue;
        }
        if (GpuAsk.of(made.pod(), gpuPolicy).kind() == GpuAsk.Kind.NONE) {
          withoutGpus++;
        } else {
          candidates.add(new Placer.Candidate(made.pod(), made.from().manifest().source().shortName()));
        }
      }
      var answers = new Placer(gpuPolicy, snapshot, placementConfig.gangPlanTimeout(), clock).place(candidates);
      PlaceReport.write(answers, refused, withoutGpus, read.problems(), output, spec.commandLine().getOut());
      return read.problems().isEmpty() ? PlaceReport.exitCode(answers, refused) : Commands.badInput(read.problems(), err);
    } catch (BadInputException e) {
      return Commands.badInput(e.problems(), err);
    }
  }
}
