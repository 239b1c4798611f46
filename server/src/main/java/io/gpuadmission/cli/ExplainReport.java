package io.gpuadmission.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.gpuadmission.admission.KubernetesJson;
import java.io.PrintWriter;
import java.util.List;

/** Writes what {@code explain} found, as text, JSON or the resulting objects in YAML. */
final class ExplainReport {
  private ExplainReport() {}

  static void write(List<Explanation> explanations, List<String> problems, OutputFormat format, PrintWriter out) {
    switch (format) {
      case text -> text(explanations, out);
      case json -> out.println(json(explanations, problems).toPrettyString());
      case yaml -> yaml(explanations, out);
    }
    out.flush();
  }

  private static void text(List<Explanation> explanations, PrintWriter out) {
    for (var e : explanations) {
      var m = e.manifest();
      var header = m.kind() + " " + e.namespace() + "/" + m.name() + "  (" + m.source().shortName() + ")  " + e.verdict();
      out.println(e.note().isEmpty() ? header : header + ": " + e.note());
      e.mutate().ifPresent(mutate -> endpoint("/mutate", mutate, e.patch(), out));
      for (var template : e.templates()) {
        var who = (template.role().equals("pod") ? "pods" : template.role() + " pods") + " (" + template.replicas() + ")";
        if (template.patch().isEmpty()) {
          out.println("  " + who + ": /mutate changes nothing");
        } else {
          out.println("  " + who + ": /mutate patch");
          ReadablePatch.lines(template.patch(), "    ").forEach(out::println);
        }
      }
      e.validate().ifPresent(validate -> endpoint("/validate", validate, null, out));
    }
    var admitted = count(explanations, Verdict.ADMITTED);
    var refused = count(explanations, Verdict.REFUSED);
    var notJudged = count(explanations, Verdict.NOT_JUDGED);
    out.println(
        explanations.size() + (explanations.size() == 1 ? " object: " : " objects: ") + admitted + " admitted, " + refused + " refused"
            + (notJudged > 0 ? ", " + notJudged + " not judged" : ""));
  }

  /** One endpoint's answer: allowed or refused with the status, its patch, its warnings. */
  private static void endpoint(String name, AdmissionResponse response, ArrayNode patch, PrintWriter out) {
    if (!Boolean.TRUE.equals(response.getAllowed())) {
      var status = response.getStatus();
      out.println("  " + name + " refused (" + status.getCode() + " " + status.getReason() + "): " + status.getMessage());
    } else if (patch == null) {
      out.println("  " + name + " admits");
    } else if (patch.isEmpty()) {
      out.println("  " + name + " admits, changes nothing");
    } else {
      out.println("  " + name + " patch");
      ReadablePatch.lines(patch, "    ").forEach(out::println);
    }
    if (response.getWarnings() != null) {
      response.getWarnings().forEach(w -> out.println("  " + name + " warning: " + w));
    }
  }

  static ObjectNode json(List<Explanation> explanations, List<String> problems) {
    var mapper = KubernetesJson.mapper();
    var root = mapper.createObjectNode();
    var objects = root.putArray("objects");
    for (var e : explanations) {
      var m = e.manifest();
      var o = objects.addObject();
      var source = o.putObject("source").put("file", m.source().file()).put("document", m.source().document()).put("line", m.source().line());
      if (m.source().item() >= 0) {
        source.put("item", m.source().item());
      }
      o.put("apiVersion", m.apiVersion()).put("kind", m.kind()).put("namespace", e.namespace()).put("name", m.name());
      o.put("verdict", e.verdict().name().toLowerCase(java.util.Locale.ROOT));
      if (!e.note().isEmpty()) {
        o.put("note", e.note());
      }
      e.mutate().ifPresent(mutate -> o.set("mutate", response(mutate, e.patch())));
      if (!e.templates().isEmpty()) {
        var templates = o.putArray("templates");
        for (var t : e.templates()) {
          templates.addObject().put("role", t.role()).put("replicas", t.replicas()).put("path", t.path()).set("patch", t.patch());
        }
      }
      e.validate().ifPresent(validate -> o.set("validate", response(validate, null)));
    }
    root.putObject("summary")
        .put("objects", explanations.size())
        .put("admitted", count(explanations, Verdict.ADMITTED))
        .put("refused", count(explanations, Verdict.REFUSED))
        .put("notJudged", count(explanations, Verdict.NOT_JUDGED));
    var badInput = root.putArray("badInput");
    problems.forEach(badInput::add);
    return root;
  }

  /** An AdmissionResponse with its patch decoded (the wire's base64 tells a reader nothing). */
  private static ObjectNode response(AdmissionResponse response, ArrayNode patch) {
    var out = KubernetesJson.mapper().createObjectNode();
    out.put("allowed", Boolean.TRUE.equals(response.getAllowed()));
    if (patch != null && Boolean.TRUE.equals(response.getAllowed())) {
      out.set("patch", patch);
    }
    var warnings = out.putArray("warnings");
    if (response.getWarnings() != null) {
      response.getWarnings().forEach(warnings::add);
    }
    if (response.getStatus() != null) {
      out.putObject("status")
          .put("code", response.getStatus().getCode())
          .put("reason", response.getStatus().getReason())
          .put("message", response.getStatus().getMessage());
    }
    return out;
  }

  /** The admitted objects as they would be stored, one YAML document each; refusals as comments. */
  private static void yaml(List<Explanation> explanations, PrintWriter out) {
    for (var e : explanations) {
      var m = e.manifest();
      var what = "# " + m.kind() + " " + e.namespace() + "/" + m.name() + " (" + m.source().shortName() + "): " + e.verdict();
      if (e.verdict() == Verdict.REFUSED) {
        out.println(what + ": " + e.refusal().map(r -> r.getStatus().getMessage()).orElse(""));
        continue;
      }
      out.println("---");
      out.println(e.templates().isEmpty() ? what : what + "; templates as /mutate will change their pods");
      out.print(Yaml.write(e.result()));
    }
  }

  private static long count(List<Explanation> explanations, Verdict verdict) {
    return explanations.stream().filter(e -> e.verdict() == verdict).count();
  }

  /** The exit code: 1 when anything is refused, else 0 (bad input is the caller's 2). */
  static int exitCode(List<Explanation> explanations) {
    return count(explanations, Verdict.REFUSED) > 0 ? GpuAdmissionCommand.REFUSED : GpuAdmissionCommand.ADMITTED;
  }
}
