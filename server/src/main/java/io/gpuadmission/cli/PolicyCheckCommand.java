package io.gpuadmission.cli;

import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterSnapshot;
import io.gpuadmission.cluster.WebhookNamespace;
import io.gpuadmission.policy.InvalidPolicyException;
import io.gpuadmission.policy.PolicyConfig;
import io.gpuadmission.policy.PolicyError;
import io.gpuadmission.policy.PolicyParser;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code policy check}: the answer {@code kubectl apply} of the policy ConfigMap gets from the
 * webhook (the same /validate, the same message), and each error at its line in the file.
 */
@Command(
    name = "check",
    sortOptions = false,
    mixinStandardHelpOptions = true,
    description = {
      "Checks policy files as the webhook checks the policy ConfigMap.",
      "%nA policy document, or the policy ConfigMap's manifest: the webhook's answer at kubectl apply, then each error"
          + " as FILE:LINE: key.path: message.%n"
    })
public class PolicyCheckCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(paramLabel = "FILE", arity = "1..*", description = "Policy files.")
  List<String> files = new ArrayList<>();

  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "text", description = "text (default) or json.")
  OutputFormat output;

  private final PolicyConfig policyConfig;
  private final AdmissionMetrics metrics;

  public PolicyCheckCommand(PolicyConfig policyConfig, AdmissionMetrics metrics) {
    this.policyConfig = policyConfig;
    this.metrics = metrics;
  }

  /** One file's answer. */
  record Checked(PolicyFile file, boolean valid, String message, List<PolicyError> errors, String note) {}

  @Override
  public Integer call() {
    var out = spec.commandLine().getOut();
    var err = spec.commandLine().getErr();
    if (output == OutputFormat.yaml) {
      return Commands.badInput(List.of("policy check writes text or json, not yaml"), err);
    }
    var checked = new ArrayList<Checked>();
    var problems = new ArrayList<String>();
    var builtIn = PolicyParser.builtInDefault();
    var webhook = new LocalWebhook(builtIn, ClusterSnapshot.empty(builtIn), policyConfig, WebhookNamespace.configured(policyConfig), metrics);
    for (var file : files) {
      try {
        checked.add(check(PolicyFile.read(file, policyConfig.key(), policyConfig.configMapName()), webhook));
      } catch (BadInputException e) {
        problems.addAll(e.problems());
      }
    }
    if (output == OutputFormat.json) {
      out.println(json(checked, problems).toPrettyString());
    } else {
      for (var c : checked) {
        out.println(c.file().file() + ": " + (c.valid() ? "valid policy" : c.message()));
        c.errors().forEach(e -> out.println(c.file().located(e) + ": " + PolicyFile.describe(e)));
        if (!c.note().isEmpty()) {
          out.println(c.file().file() + ": note: " + c.note());
        }
      }
    }
    out.flush();
    if (!problems.isEmpty()) {
      return Commands.badInput(problems, err);
    }
    return checked.stream().allMatch(Checked::valid) ? GpuAdmissionCommand.ADMITTED : GpuAdmissionCommand.REFUSED;
  }

  /** The policy ConfigMap holding the file's document, through the webhook's /validate. */
  private Checked check(PolicyFile file, LocalWebhook webhook) {
    var namespace = WebhookNamespace.configured(policyConfig);
    var name = policyConfig.configMapName();
    var mapper = KubernetesJson.mapper();
    var configMap = mapper.createObjectNode().put("apiVersion", "v1").put("kind", "ConfigMap");
    configMap.putObject("metadata").put("name", name).put("namespace", namespace);
    if (file.text() != null) {
      configMap.putObject("data").put(policyConfig.key(), file.text());
    }
    var manifest = new Manifest(new ManifestSource(file.file(), 1, 1, -1), configMap);
    var response = webhook.validate(manifest, configMap, namespace);
    var errors = List.<PolicyError>of();
    if (file.text() != null) {
      try {
        PolicyParser.parse(file.text());
      } catch (InvalidPolicyException e) {
        errors = e.errors();
      }
    }
    var note = file.configMap()
        .filter(id -> !(id.get(0).isEmpty() || id.get(0).equals(namespace)) || !id.get(1).equals(name))
        .map(id -> "this ConfigMap is " + (id.get(0).isEmpty() ? "" : id.get(0) + "/") + id.get(1) + "; the webhook reads " + namespace + "/" + name)
        .orElse("");
    var valid = Boolean.TRUE.equals(response.getAllowed());
    return new Checked(file, valid, valid ? "" : response.getStatus().getMessage(), valid ? List.of() : errors, note);
  }

  private static com.fasterxml.jackson.databind.node.ObjectNode json(List<Checked> checked, List<String> problems) {
    var root = KubernetesJson.mapper().createObjectNode();
    var files = root.putArray("files");
    for (var c : checked) {
      var o = files.addObject().put("file", c.file().file()).put("valid", c.valid());
      if (!c.valid()) {
        o.put("message", c.message());
      }
      var errors = o.putArray("errors");
      for (var e : c.errors()) {
        var location = c.file().located(e);
        var line = location.equals(c.file().file()) ? 0 : Integer.parseInt(location.substring(location.lastIndexOf(':') + 1));
        errors.addObject().put("line", line).put("policyLine", e.line()).put("path", e.path()).put("message", e.message());
      }
      if (!c.note().isEmpty()) {
        o.put("note", c.note());
      }
    }
    var badInput = root.putArray("badInput");
    problems.forEach(badInput::add);
    return root;
  }
}
