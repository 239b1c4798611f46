package io.gpuadmission.extender;

import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.GpuCapacityMapper;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangRegistry;
import io.gpuadmission.kubescheduler.KubeSchedulerModel;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.NodeEligibility;
import io.gpuadmission.placement.Nominations;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.placement.TargetWorkload;
import io.gpuadmission.placement.WorkloadLearner;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyStore;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * This service's extender as kube-scheduler calls it, without HTTP: filter and prioritize get
 * kube-scheduler's JSON ({@code ExtenderArgs} with {@code NodeNames}, as {@code nodeCacheCapable:
 * true} sends it) and answer JSON, through the same codec and {@link ExtenderService} as {@code
 * ExtenderResource}; bind reads {@code ExtenderBindingArgs} and makes bind's decision ({@link
 * PlacementDecider#choose} and the ledger's reservation, as {@code PodBinder} does), leaving out
 * only the API calls (the annotation patch and the Binding). What the informers would then show
 * is fed back as they would: nodes through the service's own node mapping, a new pod as pending, a
 * bound pod with its annotations (the ledger's confirmation and the learned workload).
 */
public final class WireExtender implements KubeSchedulerModel.Extender {
  private static final ObjectMapper JSON = KubernetesJson.mapper();
  private static final byte[] POD = "{\"Pod\":".getBytes(StandardCharsets.UTF_8);
  private static final byte[] NODE_NAMES = ",\"NodeNames\":".getBytes(StandardCharsets.UTF_8);
  /** The trace has no clock: one fixed instant for the annotations' assume time. */
  private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);

  private final GpuPolicy policy;
  private final boolean wire;
  private final GpuLedger ledger = new GpuLedger();
  private final WorkloadLearner learner = new WorkloadLearner(CLOCK, () -> Duration.ofHours(1));
  private final PlacementDecider decider;
  private final ExtenderService service;
  /** Each pod's JSON, written once: it does not change between filter and prioritize. */
  private final Map<Pod, byte[]> podJson = new java.util.IdentityHashMap<>();

  /**
   * An extender over {@code nodes} with {@code policy}; FGD measures against the learned workload,
   * or against {@code given} when present (the simulator's reference run). With {@code wire}
   * false, filter and prioritize make the decider calls {@link ExtenderService} makes (the pod's
   * eligibility, no nominations: the trace has no preemption), without the JSON codec, the gang
   * gate (the trace has no gangs) and the preemptor (it never acts here): the trace simulator's own
   * runs, which take the allocator's choice.
   */
  public WireExtender(GpuPolicy policy, List<Node> nodes, Optional<Supplier<TargetWorkload>> given, boolean wire) {
    this.policy = policy;
    this.wire = wire;
    var byName = new HashMap<String, Node>();
    for (var node : nodes) {
      GpuCapacityMapper.map(node, policy.nodeLabels()).ifPresentOrElse(ledger::putNode, () -> ledger.putNodeWithoutGpus(node.getMetadata().getName()));
      byName.put(node.getMetadata().getName(), node);
    }
    var policies = new PolicyStore();
    policies.replace(policy, PolicyStore.PolicySource.CONFIGMAP);
    // The Node objects as the node informer holds them (PlacementWiring): eligibility is judged on them.
    this.decider = new PlacementDecider(ledger, policies::current, given.orElse(learner), name -> Optional.ofNullable(byName.get(name)));
    var gangs = new GangRegistry(policies::current);
    var gate = new GangGate(gangs, new GangPlanning(decider, ledger, List::of, gangs), policies::current, Duration.ofMinutes(1));
    this.service = Services.withoutPreemption(decider, gate, policies, ledger, learner);
  }

  /** The informer shows a new pod: pending. */
  public void created(Pod pod) {
    learner.observe(pod, policy);
  }

  @Override
  public List<String> filter(KubeSchedulerModel.Pod pod, List<String> nodes) {
    if (!wire) {
      var object = (Pod) pod.object();
      var ask = GpuAsk.of(object, policy);
      learner.asked(object.getMetadata().getUid(), ask);
      return decider.filter(ask, NodeEligibility.of(object, policy), nodes, Nominations.NONE, 0, object.getMetadata().getUid()).passed();
    }
    var passed = new ArrayList<String>();
    // Only what kube-scheduler acts on: NodeNames (and Error); the reasons are for people.
    try (var parser = JSON.createParser(call(pod, nodes, true))) {
      parser.nextToken();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        var field = parser.currentName();
        parser.nextToken();
        if (field.equals("NodeNames") && parser.currentToken() == JsonToken.START_ARRAY) {
          while (parser.nextToken() == JsonToken.VALUE_STRING) {
            passed.add(parser.getText());
          }
        } else if (field.equals("Error") && !parser.getValueAsString("").isEmpty()) {
          throw new IllegalStateException("filter error: " + parser.getText());
        } else {
          parser.skipChildren();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return passed;
  }

  @Override
  public Map<String, Integer> prioritize(KubeSchedulerModel.Pod pod, List<String> nodes) {
    var scores = new HashMap<String, Integer>(nodes.size() * 2);
    if (!wire) {
      var object = (Pod) pod.object();
      var ask = GpuAsk.of(object, policy);
      learner.asked(object.getMetadata().getUid(), ask);
      decider.prioritize(ask, NodeEligibility.of(object, policy), nodes).forEach(s -> scores.put(s.node(), s.score()));
      return scores;
    }
    try (var parser = JSON.createParser(call(pod, nodes, false))) {
      parser.nextToken();
      while (parser.nextToken() == JsonToken.START_OBJECT) {
        String host = null;
        var score = 0;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          var field = parser.currentName();
          parser.nextToken();
          if (field.equals("Host")) {
            host = parser.getText();
          } else if (field.equals("Score")) {
            score = parser.getIntValue();
          }
        }
        scores.put(host, score);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return scores;
  }

  @Override
  public String bind(KubeSchedulerModel.Pod model, String node) {
    var pod = (Pod) model.object();
    var binding =
        Map.of(
            "PodName", pod.getMetadata().getName(),
            "PodNamespace", pod.getMetadata().getNamespace(),
            "PodUID", pod.getMetadata().getUid(),
            "Node", node);
    var args = ExtenderCodec.bindingArgs(write(binding));
    var ask = GpuAsk.of(pod, policy);
    var choice = decider.choose(ask, args.node());
    if (choice instanceof PlacementDecider.Choice.Refused refused) {
      return refused.reason();
    }
    var gpus = ((PlacementDecider.Choice.Chosen) choice).gpus();
    var memory = ask.kind() == GpuAsk.Kind.SHARE ? ask.memory() : 0;
    if (!ledger.reserve(GpuClaim.reserved(args.podUid(), args.podNamespace() + "/" + args.podName(), args.node(), gpus, memory))) {
      return "GPUs " + gpus + " of " + node + " were just taken";
    }
    // What the informer shows next: the pod bound, with the annotations bind wrote.
    var annotations =
        memory > 0
            ? GpuAnnotations.share(gpus.get(0), memory, ledger.capacity(node).orElseThrow().memory().get(gpus.get(0)), CLOCK.instant())
            : GpuAnnotations.whole(gpus);
    pod.getMetadata().setAnnotations(new HashMap<>(annotations));
    pod.getSpec().setNodeName(node);
    ledger.confirm(PodClaims.claimOf(pod).orElseThrow());
    learner.observe(pod, policy);
    podJson.remove(pod);
    return "";
  }

  /** The ledger the extender decides from (the trace simulator reads the allocation off it). */
  public GpuLedger ledger() {
    return ledger;
  }

  /** The workload FGD measures against now. */
  public TargetWorkload workload() {
    return decider.workload();
  }

  private byte[] call(KubeSchedulerModel.Pod model, List<String> nodes, boolean filter) {
    var pod = (Pod) model.object();
    var body = new ByteArrayOutputStream(64 + nodes.size() * 24);
    try {
      body.write(POD);
      body.write(podJson.computeIfAbsent(pod, p -> write(p)));
      body.write(NODE_NAMES);
      body.write(JSON.writeValueAsBytes(nodes));
      body.write('}');
      var args = ExtenderCodec.args(body.toByteArray());
      return filter ? ExtenderCodec.filterAnswer(service.filter(args)) : ExtenderCodec.prioritizeAnswer(service.prioritize(args));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] write(Object value) {
    try {
      return JSON.writeValueAsBytes(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
