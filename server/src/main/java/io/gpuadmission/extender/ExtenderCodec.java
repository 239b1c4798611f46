package io.gpuadmission.extender;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.JsonProblem;
import io.gpuadmission.admission.QuantityAsWritten;
import io.gpuadmission.placement.PlacementDecider.NodeScore;
import io.gpuadmission.preemption.CandidateReview;
import io.gpuadmission.pod.NullListEntry;
import io.gpuadmission.pod.QuantitySyntax;
import io.gpuadmission.policy.KubernetesNames;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Reads extender requests, refusing what kube-scheduler could not have sent with a reason. */
final class ExtenderCodec {
  // Quantities kept as written: args() and preemptionArgs() refuse, in the project's words, those
  // that are no quantity before any placement arithmetic reads them.
  private static final ObjectMapper MAPPER = JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .addMixIn(io.fabric8.kubernetes.api.model.Quantity.class, QuantityAsWritten.MixIn.class).build();
  private static final ExtenderArgsReader ARGS = new ExtenderArgsReader(MAPPER);

  private ExtenderCodec() {}

  /** An extender request that cannot be read; answered with HTTP 400 and this message. */
  static final class MalformedRequest extends RuntimeException {
    MalformedRequest(String message) {
      super(message);
    }
  }

  static ExtenderWire.Args args(byte[] body) {
    rejectNullListEntryInPod(body);
    // The usual body streamed; any other read the general way, which also words every error.
    var args = ARGS.read(body).orElseGet(() -> read(body, ExtenderWire.Args.class, "ExtenderArgs"));
    if (args.pod() == null || args.pod().getMetadata() == null) {
      throw new MalformedRequest("ExtenderArgs without a Pod (expected {\"Pod\": {...}, \"NodeNames\": [...]})");
    }
    if (args.nodeNames() == null && (args.nodes() == null || args.nodes().getItems() == null)) {
      throw new MalformedRequest("ExtenderArgs without NodeNames or Nodes");
    }
    QuantitySyntax.problem(args.pod()).ifPresent(problem -> {
      throw new MalformedRequest("Pod \"" + args.pod().getMetadata().getName() + "\": " + problem);
    });
    var names = names(args);
    for (int i = 0; i < names.size(); i++) {
      if (names.get(i) == null || names.get(i).isBlank()) {
        throw new MalformedRequest((args.nodeNames() != null ? "NodeNames[" : "Nodes.items[") + i + "] names no node");
      }
    }
    if (args.nodeNames() == null) {
      for (var node : args.nodes().getItems()) {
        QuantitySyntax.problem(node).ifPresent(problem -> {
          throw new MalformedRequest("Node " + quoted(node.getMetadata().getName()) + ": " + problem);
        });
      }
    }
    return args;
  }

  /** Candidate node names, from whichever form the scheduler sent. */
  static List<String> names(ExtenderWire.Args args) {
    return args.nodeNames() != null
        ? args.nodeNames()
        : args.nodes().getItems().stream().map(n -> n == null || n.getMetadata() == null ? null : n.getMetadata().getName()).toList();
  }

  /**
   * ExtenderPreemptionArgs, each node's victims as UIDs (from whichever form the scheduler sent),
   * in the order sent.
   */
  static Preemption preemptionArgs(byte[] body) {
    rejectNullListEntryInPod(body);
    var args = read(body, ExtenderWire.PreemptionArgs.class, "ExtenderPreemptionArgs");
    if (args.pod() == null || args.pod().getMetadata() == null) {
      throw new MalformedRequest("ExtenderPreemptionArgs without a Pod (expected {\"Pod\": {...}, \"NodeNameToMetaVictims\": {...}})");
    }
    QuantitySyntax.problem(args.pod()).ifPresent(problem -> {
      throw new MalformedRequest("Pod \"" + args.pod().getMetadata().getName() + "\": " + problem);
    });
    var candidates = new LinkedHashMap<String, CandidateReview.Candidate>();
    if (args.nodeNameToMetaVictims() != null) {
      args.nodeNameToMetaVictims().forEach((node, victims) -> candidates.put(node(node), candidate(node, victims == null ? null : victims.pods(),
          p -> p == null ? null : p.uid(), victims == null ? 0 : victims.numPdbViolations())));
    } else if (args.nodeNameToVictims() != null) {
      args.nodeNameToVictims().forEach((node, victims) -> candidates.put(node(node), candidate(node, victims == null ? null : victims.pods(),
          p -> p == null || p.getMetadata() == null ? null : p.getMetadata().getUid(), victims == null ? 0 : victims.numPdbViolations())));
    }
    return new Preemption(args.pod(), candidates);
  }

  /** The preemptor and kube-scheduler's candidates, read. */
  record Preemption(Pod pod, Map<String, CandidateReview.Candidate> candidates) {}

  /** The answer: every node's victims by UID. */
  static byte[] preemptionAnswer(Map<String, CandidateReview.Candidate> candidates) {
    var out = new LinkedHashMap<String, ExtenderWire.MetaVictims>();
    candidates.forEach((node, c) -> out.put(node, new ExtenderWire.MetaVictims(c.victims().stream().map(ExtenderWire.MetaPod::new).toList(), c.pdbViolations())));
    return write(new ExtenderWire.PreemptionResult(out));
  }

  private static String node(String name) {
    if (name == null || name.isBlank()) {
      throw new MalformedRequest("a node in ExtenderPreemptionArgs has no name");
    }
    return name;
  }

  private static <T> CandidateReview.Candidate candidate(String node, List<T> pods, Function<T, String> uid, long pdbViolations) {
    var uids = new ArrayList<String>();
    for (int i = 0; pods != null && i < pods.size(); i++) {
      var id = uid.apply(pods.get(i));
      if (id == null || id.isBlank()) {
        throw new MalformedRequest("victim " + i + " on node " + quoted(node) + " has no UID");
      }
      uids.add(id);
    }
    return new CandidateReview.Candidate(uids, pdbViolations);
  }

  static ExtenderWire.BindingArgs bindingArgs(byte[] body) {
    var args = read(body, ExtenderWire.BindingArgs.class, "ExtenderBindingArgs");
    if (blank(args.podName()) || blank(args.podNamespace()) || blank(args.node()) || blank(args.podUid())) {
      // kube-scheduler always sends the UID: without it a bind could land on a pod recreated under the name.
      throw new MalformedRequest("ExtenderBindingArgs needs PodName, PodNamespace, PodUID and Node");
    }
    // Names kube-scheduler takes from objects the API server validated: anything else is no pod.
    if (!KubernetesNames.isNamespace(args.podNamespace())) {
      throw new MalformedRequest("PodNamespace " + quoted(args.podNamespace()) + " is not a namespace name (a DNS label)");
    }
    if (!KubernetesNames.isSubdomain(args.podName())) {
      throw new MalformedRequest("PodName " + quoted(args.podName()) + " is not a pod name (a DNS subdomain)");
    }
    if (!KubernetesNames.isSubdomain(args.node())) {
      throw new MalformedRequest("Node " + quoted(args.node()) + " is not a node name (a DNS subdomain)");
    }
    return args;
  }

  /** A filter answer, straight to bytes where it can be. */
  static byte[] filterAnswer(ExtenderWire.FilterResult answer) {
    var direct = ExtenderAnswerWriter.filter(answer);
    return direct != null ? direct : write(answer);
  }

  /** A prioritize answer (HostPriorityList), straight to bytes where it can be. */
  static byte[] prioritizeAnswer(List<NodeScore> scores) {
    var direct = ExtenderAnswerWriter.priorities(scores);
    return direct != null ? direct : write(scores.stream().map(s -> new ExtenderWire.HostPriority(s.node(), s.score())).toList());
  }

  static byte[] write(Object answer) {
    try {
      return MAPPER.writeValueAsBytes(answer);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode " + answer.getClass().getSimpleName(), e);
    }
  }

  private static <T> T read(byte[] body, Class<T> type, String what) {
    if (body == null || body.length == 0) {
      throw new MalformedRequest("empty body: expected a JSON " + what);
    }
    try {
      var value = MAPPER.readValue(body, type);
      if (value == null) {
        throw new MalformedRequest("expected a JSON " + what + ", got null");
      }
      return value;
    } catch (JsonProcessingException e) {
      throw new MalformedRequest(JsonProblem.describe(e, "a" + (what.startsWith("E") ? "n " : " ") + what + " object", ""));
    } catch (IOException | IllegalArgumentException e) {
      throw new MalformedRequest("not a JSON " + what + ": " + String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
    }
  }

  /** A Pod kube-scheduler could not have sent, which the placement code would trip over. */
  private static void rejectNullListEntryInPod(byte[] body) {
    if (body == null || body.length == 0) {
      return;
    }
    try (var parser = MAPPER.createParser(body)) {
      NullListEntry.find(parser, "", "Pod").ifPresent(where -> {
        throw new MalformedRequest(NullListEntry.problem(where));
      });
    } catch (IOException notJson) {
      // read() says what is wrong with it.
    }
  }

  private static String quoted(String name) {
    return "\"" + (name.length() <= 80 ? name : name.substring(0, 77) + "...") + "\"";
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
