package io.gpuadmission.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpuadmission.admission.KubernetesJson;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Writes what {@code place} found: a table for people, JSON for machines. */
final class PlaceReport {
  private PlaceReport() {}

  /** An input object /validate refuses: it is never created, so it has no place. */
  record Refused(Explanation explanation, String message) {}

  static void write(List<Placer.Answer> answers, List<Refused> refused, int withoutGpus, List<String> problems, OutputFormat format, PrintWriter out) {
    if (format == OutputFormat.json) {
      out.println(json(answers, refused, withoutGpus, problems).toPrettyString());
    } else {
      text(answers, refused, withoutGpus, out);
    }
    out.flush();
  }

  private static void text(List<Placer.Answer> answers, List<Refused> refused, int withoutGpus, PrintWriter out) {
    var rows = new ArrayList<List<String>>();
    rows.add(List.of("POD", "ASKS", "NODE", "GPUS", "GANG", "FROM"));
    for (var a : answers) {
      rows.add(
          List.of(
              a.namespace() + "/" + a.name(),
              a.ask(),
              a.node().orElse("-"),
              a.placed() ? gpus(a) : "-",
              a.gang().map(Object::toString).orElse("-"),
              a.source().isEmpty() ? "cluster" : a.source()));
    }
    var widths = new int[6];
    rows.forEach(r -> {
      for (int i = 0; i < r.size(); i++) {
        widths[i] = Math.max(widths[i], r.get(i).length());
      }
    });
    for (int row = answers.isEmpty() ? 1 : 0; row < rows.size(); row++) {
      var line = new StringBuilder();
      for (int i = 0; i < 6; i++) {
        line.append(i == 5 ? rows.get(row).get(i) : ReadablePatch.pad(rows.get(row).get(i), widths[i] + 2));
      }
      out.println(line.toString().stripTrailing());
      if (row > 0 && !answers.get(row - 1).placed()) {
        reasons(answers.get(row - 1), out);
      }
    }
    for (var r : refused) {
      var m = r.explanation().manifest();
      out.println(m.kind() + " " + r.explanation().namespace() + "/" + m.name() + " (" + m.source().shortName() + ") is never created: " + r.message());
    }
    var placed = answers.stream().filter(Placer.Answer::placed).count();
    out.println(
        answers.size() + " GPU pod" + (answers.size() == 1 ? "" : "s") + ": " + placed + " placed, " + (answers.size() - placed) + " nowhere"
            + (refused.isEmpty() ? "" : "; " + refused.size() + " refused at admission")
            + (withoutGpus == 0 ? "" : "; " + withoutGpus + " asking no GPU left to kube-scheduler"));
  }

  /** Why nowhere: the reason, then the nodes grouped by what each says. */
  private static void reasons(Placer.Answer answer, PrintWriter out) {
    out.println("  " + answer.why());
    var byReason = new LinkedHashMap<String, List<String>>();
    answer.nodes().forEach((node, reason) -> byReason.computeIfAbsent(reason, r -> new ArrayList<>()).add(node));
    if (byReason.size() == 1 && byReason.containsKey(answer.why())) {
      out.println("    all " + answer.nodes().size() + " nodes");
      return;
    }
    byReason.forEach((reason, nodes) -> out.println("    " + String.join(", ", nodes) + ": " + reason));
  }

  private static String gpus(Placer.Answer a) {
    var indices = a.gpus().stream().map(String::valueOf).collect(Collectors.joining(","));
    return a.memory() > 0 ? indices + " (" + a.memory() + "GiB)" : indices;
  }

  static ObjectNode json(List<Placer.Answer> answers, List<Refused> refused, int withoutGpus, List<String> problems) {
    var mapper = KubernetesJson.mapper();
    var root = mapper.createObjectNode();
    var pods = root.putArray("pods");
    for (var a : answers) {
      var o = pods.addObject().put("namespace", a.namespace()).put("name", a.name()).put("from", a.source().isEmpty() ? "cluster" : a.source());
      o.put("asks", a.ask());
      a.gang().ifPresent(g -> o.put("gang", g.toString()));
      o.put("placed", a.placed());
      if (a.placed()) {
        o.put("node", a.node().get());
        var gpus = o.putArray("gpus");
        a.gpus().forEach(gpus::add);
        if (a.memory() > 0) {
          o.put("memoryGiB", a.memory());
        }
      } else {
        o.put("why", a.why());
        var nodes = o.putObject("nodes");
        a.nodes().forEach(nodes::put);
      }
    }
    var refusedArray = root.putArray("refused");
    for (var r : refused) {
      var m = r.explanation().manifest();
      refusedArray.addObject().put("kind", m.kind()).put("namespace", r.explanation().namespace()).put("name", m.name())
          .put("from", m.source().shortName()).put("message", r.message());
    }
    var placed = answers.stream().filter(Placer.Answer::placed).count();
    root.putObject("summary").put("gpuPods", answers.size()).put("placed", placed).put("nowhere", answers.size() - placed)
        .put("refused", refused.size()).put("withoutGpus", withoutGpus);
    var badInput = root.putArray("badInput");
    problems.forEach(badInput::add);
    return root;
  }

  static int exitCode(List<Placer.Answer> answers, List<Refused> refused) {
    return refused.isEmpty() && answers.stream().allMatch(Placer.Answer::placed) ? GpuAdmissionCommand.ADMITTED : GpuAdmissionCommand.REFUSED;
  }
}
