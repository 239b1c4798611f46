package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.cluster.PlacementLeadership;
import io.gpuadmission.gang.GangCoordinator;
import io.gpuadmission.gang.GangEvents;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.gang.GangMetrics;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangRegistry;
import io.gpuadmission.placement.BindRequest;
import io.gpuadmission.placement.BindingApiServer;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PodBinder;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.preemption.DisruptionBudgets;
import io.gpuadmission.preemption.GangPreemptor;
import io.gpuadmission.preemption.GpuPreemptor;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.preemption.PreemptionMetrics;
import io.gpuadmission.preemption.PreemptionSearch;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.support.Fixtures;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Gang placement of topology jobs on the fabric8 mock API server (CRUD, Bindings as the real one
 * does them), with the extender driven as kube-scheduler drives it: ExtenderArgs JSON for filter
 * and prioritize over every node, bind on the best node.
 */
class GangPlacementTest {
  private static final String NS = "ml";
  private static final List<String> ALL_NODES = List.of("dgx1-a", "dgx1-b", "hgx-h100-a", "dgx1-share-pool", "dgx1-cordoned");
  private static final PlacementLeadership.Timing FAST = new PlacementLeadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofMillis(200));
  private static final Duration PLAN_TIMEOUT = Duration.ofSeconds(60);

  private final GpuPolicy policy = policy();
  private BindingApiServer.Started api;
  private KubernetesClient admin;
  private final List<Replica> replicas = new CopyOnWriteArrayList<>();

  /** One replica of the service: informers, ledger, election, binder, gang planning, extender service. */
  private final class Replica implements AutoCloseable {
    final KubernetesClient client = api.server().createClient();
    final GpuLedger ledger = new GpuLedger();
    final LeaderGate gate;
    final PolicyStore policies = new PolicyStore();
    final GangRegistry gangs = new GangRegistry(policies::current);
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final PodBinder binder;
    final LedgerWatcher watcher;
    final GangCoordinator coordinator;
    final ExtenderService service;
    final PlacementLeadership leadership;

    Replica(String identity, Duration planTimeout) {
      policies.replace(policy, PolicyStore.PolicySource.CONFIGMAP);
      gate = new LeaderGate(identity);
      var decider = new PlacementDecider(ledger, policies::current);
      binder = new PodBinder(client, ledger, decider, gate, policies::current, Clock.systemUTC(), Duration.ofMinutes(5));
      var facts = new PodFactsIndex(policies::current, ledger);
      watcher = new LedgerWatcher(client, ledger, policies::current).alsoTell(gangs::current, gangs::gone).alsoTell(facts::current, facts::gone);
      var planning = new GangPlanning(decider, ledger, watcher::nodes, gangs);
      service = Services.with(decider, new GangGate(gangs, planning, policies::current, planTimeout), policies, ledger, facts, client, gate);
      var search = new PreemptionSearch(ledger, facts, decider, new DisruptionBudgets());
      var evictions = new GpuPreemptor(client, search, decider, ledger, facts, gate, policies::current, Clock.systemUTC(),
          new GpuPreemptor.Timing(Duration.ofMillis(200), Duration.ofSeconds(30)), new PreemptionMetrics(meters));
      coordinator =
          new GangCoordinator(
              client, gangs, planning, ledger, gate, Clock.systemUTC(),
              new GangCoordinator.Timing(planTimeout, Duration.ofSeconds(30)),
              new GangEvents(client, Clock.systemUTC()), new GangMetrics(meters))
              .preemptWith(new GangPreemptor(client, evictions, planning, ledger, facts, new PreemptionMetrics(meters)));
      binder.onBound(coordinator::memberBound);
      watcher.start();
      coordinator.start();
      leadership = new PlacementLeadership(client, ledger, gate, policies::current).start(NS, "gpu-admission-placement", FAST);
    }

    /** kube-scheduler's filter: ExtenderArgs with the pod as the API server has it and every node's name. */
    JsonNode filter(String pod) {
      return call(() -> service.filter(ExtenderCodec.args(args(pod))));
    }

    Map<String, Long> prioritize(String pod) {
      var scores = new LinkedHashMap<String, Long>();
      service.prioritize(ExtenderCodec.args(args(pod))).forEach(p -> scores.put(p.node(), (long) p.score()));
      return scores;
    }

    /** Filter, prioritize, bind on the highest score, as kube-scheduler's scheduling and binding cycles do. */
    String schedule(String pod) {
      var passed = new ArrayList<String>();
      filter(pod).path("NodeNames").forEach(n -> passed.add(n.asText()));
      if (passed.isEmpty()) {
        return "unschedulable";
      }
      var scores = prioritize(pod);
      var best = passed.stream().max((a, b) -> Long.compare(scores.getOrDefault(a, 0L), scores.getOrDefault(b, 0L))).orElseThrow();
      var current = admin.pods().inNamespace(NS).withName(pod).get();
      var error = binder.bind(new BindRequest(NS, pod, current.getMetadata().getUid(), best));
      return error.isEmpty() ? best : error;
    }

    private byte[] args(String pod) {
      var current = admin.pods().inNamespace(NS).withName(pod).get();
      var json = KubernetesJson.mapper().createObjectNode();
      json.set("Pod", KubernetesJson.mapper().valueToTree(current));
      var names = json.putArray("NodeNames");
      ALL_NODES.forEach(names::add);
      return json.toString().getBytes(StandardCharsets.UTF_8);
    }

    double counter(String name, String tag, String value) {
      var counter = meters.find(name).tag(tag, value).counter();
      return counter == null ? 0 : counter.count();
    }

    double gauge(String state) {
      var gauge = meters.find("gpu_admission_gangs").tag("state", state).gauge();
      return gauge == null ? -1 : gauge.value();
    }

    @Override
    public void close() {
      coordinator.close();
      leadership.close();
      watcher.close();
      client.close();
    }
  }

  private static JsonNode call(java.util.function.Supplier<Object> work) {
    return KubernetesJson.mapper().valueToTree(work.get());
  }

  private static GpuPolicy policy() {
    try {
      return PolicyParser.parse(Fixtures.text(Fixtures.path("gang/policy.yaml")));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @BeforeEach
  void cluster() {
    api = BindingApiServer.start();
    admin = api.server().createClient();
    Fixtures.nodes(Fixtures.path("gang/nodes.yaml")).forEach(n -> admin.resource(n).create());
  }

  @AfterEach
  void stop() {
    replicas.forEach(Replica::close);
    admin.close();
    api.server().destroy();
  }

  private Replica replica(String identity, Duration planTimeout) {
    var replica = new Replica(identity, planTimeout);
    replicas.add(replica);
    return replica;
  }

  private Replica leader() {
    var replica = replica("replica-a", PLAN_TIMEOUT);
    await().atMost(Duration.ofSeconds(20)).until(() -> replica.gate.leading() && replica.ledger.nodes().size() == 5);
    return replica;
  }

  /** A member of job {@code job} from the bert-worker fixture: its name, replica count, GPUs and extra node selector. */
  private Pod member(String job, int index, String replicas, int gpus, Map<String, String> selector) {
    return member(job, index, replicas, gpus, b -> b.editSpec().addToNodeSelector(selector).endSpec());
  }

  /** A member of job {@code job} from the bert-worker fixture, with {@code edit} applied last. */
  private Pod member(String job, int index, String replicas, int gpus, java.util.function.UnaryOperator<PodBuilder> edit) {
    var template = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("gang/bert-worker.yaml")), Pod.class);
    var pod =
        new PodBuilder(template)
            .editMetadata().withName(job + "-worker-" + index)
            .addToLabels("gpu-topology", job).addToLabels("gpu-topology-replica", replicas)
            .addToLabels("training.kubeflow.org/job-name", job).endMetadata()
            .editSpec()
            .editFirstContainer().editResources().addToLimits("aliyun.com/gpu", new io.fabric8.kubernetes.api.model.Quantity(Integer.toString(gpus))).endResources().endContainer()
            .endSpec();
    return admin.resource(edit.apply(pod).build()).create();
  }

  /** A 1-GPU member of a 2-member job on the host network with the training operator's port 23456. */
  private Pod portMember(String job, int index) {
    return member(job, index, "2", 1, b -> b.editSpec().editFirstContainer()
        .addNewPort().withName("pytorchjob-port").withContainerPort(23456).endPort().endContainer().endSpec());
  }


  private static final Map<String, String> V100 = Map.of("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB");

  private Map<String, String> plans(String job, int members) {
    var out = new LinkedHashMap<String, String>();
    for (int i = 0; i < members; i++) {
      var pod = admin.pods().inNamespace(NS).withName(job + "-worker-" + i).get();
      out.put(pod.getMetadata().getName(), MemberPlan.of(pod).map(MemberPlan::place).orElse(""));
    }
    return out;
  }

  private List<String> events(String reason) {
    return admin.v1().events().inNamespace(NS).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .map(e -> e.getInvolvedObject().getName() + ": " + e.getMessage())
        .sorted()
        .toList();
  }

  private static Map<String, String> unresolvable(JsonNode answer) {
    var out = new LinkedHashMap<String, String>();
    answer.path("FailedAndUnresolvableNodes").fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  private static Map<String, String> allNodes(String reason) {
    return ALL_NODES.stream().collect(Collectors.toMap(n -> n, n -> reason, (a, b) -> a, LinkedHashMap::new));
  }

  @Test
  void membersCreatedOneByOneWaitThenBindExactlyWherePlannedOnTheDgx1CubeMesh() {
    var replica = leader();
    for (int i = 0; i < 3; i++) {
      member("bert", i, "4", 2, V100);
      // The replica's informer must show the members created before (kube-scheduler's filter comes
      // after its own informer has shown the pod; ours may lag behind it under load).
      var existing = i + 1;
      await().atMost(Duration.ofSeconds(5)).until(() -> replica.gangs.members(new io.gpuadmission.gang.GangKey(NS, "bert")).size() == existing);
      var answer = replica.filter("bert-worker-" + i);
      assertThat(answer.path("NodeNames")).isEmpty();
      assertThat(answer.path("FailedNodes")).isEmpty();
      assertThat(unresolvable(answer)).isEqualTo(allNodes("gang \"ml/bert\": " + (i + 1) + " of 4 members exist, waiting for the rest"));
    }
    assertThat(replica.ledger.claims()).isEmpty();

    member("bert", 3, "4", 2, V100);

    // One plan for all four on one DGX-1, each pair NVLink-connected: {0,3} {1,2} {4,7} {5,6}.
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 4).containsValue(""));
    assertThat(plans("bert", 4))
        .containsExactly(
            Map.entry("bert-worker-0", "dgx1-a GPUs 0,3"),
            Map.entry("bert-worker-1", "dgx1-a GPUs 1,2"),
            Map.entry("bert-worker-2", "dgx1-a GPUs 4,7"),
            Map.entry("bert-worker-3", "dgx1-a GPUs 5,6"));
    var message = "gang \"ml/bert\" planned on dgx1-a GPUs 0,3, dgx1-a GPUs 1,2, dgx1-a GPUs 4,7 and dgx1-a GPUs 5,6";
    await().atMost(Duration.ofSeconds(5)).until(() -> events("GangPlanned").size() == 4);
    assertThat(events("GangPlanned")).containsExactly(
        "bert-worker-0: " + message, "bert-worker-1: " + message, "bert-worker-2: " + message, "bert-worker-3: " + message);
    // The plan holds the GPUs in the ledger: another pod cannot take them.
    assertThat(replica.ledger.claimsOn("dgx1-a")).extracting(GpuClaim::phase).containsOnly(GpuClaim.Phase.PLANNED).hasSize(4);

    var planned = replica.filter("bert-worker-1");
    assertThat(planned.path("NodeNames")).extracting(JsonNode::asText).containsExactly("dgx1-a");
    assertThat(unresolvable(planned)).containsEntry("dgx1-b", "gang \"ml/bert\": this member is planned on dgx1-a GPUs 1,2").hasSize(4);
    assertThat(replica.prioritize("bert-worker-1")).containsEntry("dgx1-a", 10L).containsEntry("dgx1-b", 0L);

    for (int i = 0; i < 4; i++) {
      assertThat(replica.schedule("bert-worker-" + i)).isEqualTo("dgx1-a");
    }
    var indices = new ArrayList<String>();
    for (int i = 0; i < 4; i++) {
      var pod = admin.pods().inNamespace(NS).withName("bert-worker-" + i).get();
      assertThat(pod.getSpec().getNodeName()).isEqualTo("dgx1-a");
      indices.add(pod.getMetadata().getAnnotations().get(GpuAnnotations.GPU_INDICES));
    }
    assertThat(indices).containsExactly("0,3", "1,2", "4,7", "5,6");
    await().atMost(Duration.ofSeconds(5)).until(() -> replica.meters.find("gpu_admission_gang_placement_seconds").timer().count() == 1);
    assertThat(replica.counter("gpu_admission_gang_plans_total", "outcome", "planned")).isEqualTo(1);
    // The gauges are set at the end of the planner's pass that measured the time: wait for it.
    await().atMost(Duration.ofSeconds(5)).until(() -> replica.gauge("planned") == 0);
  }

  @Test
  void aGangWithoutModelSelectorGoesToTheNvSwitchBoardAndSkipsOtherPoolsAndCordonedNodes() {
    var replica = leader();
    for (int i = 0; i < 4; i++) {
      member("llama", i, "4", 2, Map.of());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("llama", 4).containsValue(""));
    assertThat(plans("llama", 4).values()).containsExactly("hgx-h100-a GPUs 0,1", "hgx-h100-a GPUs 2,3", "hgx-h100-a GPUs 4,5", "hgx-h100-a GPUs 6,7");

    // A second gang of 3 × 8 on what is left: the two DGX-1 of the pool hold two members; the
    // share-pool node (other nodeSelector) and the cordoned one do not count.
    for (int i = 0; i < 3; i++) {
      member("gpt", i, "3", 8, Map.of());
    }
    var reason = "gang \"ml/gpt\": needs 3 × 8 GPUs, the cluster has room for 2 (on the 3 nodes its members may run on)";
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(unresolvable(replica.filter("gpt-worker-2"))).isEqualTo(allNodes(reason)));
    assertThat(unresolvable(replica.filter("gpt-worker-0"))).isEqualTo(allNodes(reason));
    assertThat(plans("gpt", 3).values()).containsOnly("");
    assertThat(replica.ledger.claims().values()).extracting(GpuClaim::pod).allMatch(p -> p.startsWith("ml/llama-"));
    await().atMost(Duration.ofSeconds(5)).until(() -> replica.gauge("no_room") == 1);
    await().atMost(Duration.ofSeconds(5)).until(() -> events("GangWaiting").size() == 3);
    assertThat(events("GangWaiting")).allMatch(e -> e.endsWith(": " + reason));
  }

  @Test
  void aGangThatDoesNotFitReservesNothingAndIsPlannedWhenAPodEnds() {
    var replica = leader();
    var holder = admin.resource(new PodBuilder().withNewMetadata().withName("holder").withNamespace(NS)
        .addToAnnotations(GpuAnnotations.GPU_INDICES, "0,1,2,3,4,5,6,7").endMetadata()
        .withNewSpec().withNodeName("dgx1-b").addNewContainer().withName("c").withImage("cuda")
        .withNewResources().addToLimits("aliyun.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("8")).endResources()
        .endContainer().endSpec().build()).create();
    await().atMost(Duration.ofSeconds(5)).until(() -> replica.ledger.claimsOn("dgx1-b").size() == 1);

    member("resnet", 0, "2", 8, V100);
    member("resnet", 1, "2", 8, V100);
    var reason = "gang \"ml/resnet\": needs 2 × 8 GPUs, the cluster has room for 1 (on the 2 nodes its members may run on)";
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(unresolvable(replica.filter("resnet-worker-1"))).isEqualTo(allNodes(reason)));
    replica.coordinator.reconcile();
    assertThat(plans("resnet", 2).values()).containsOnly("");
    assertThat(replica.ledger.claims()).hasSize(1);

    admin.resource(holder).delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("resnet", 2).containsValue(""));
    assertThat(plans("resnet", 2).values()).containsExactly("dgx1-a GPUs 0,1,2,3,4,5,6,7", "dgx1-b GPUs 0,1,2,3,4,5,6,7");
    assertThat(replica.schedule("resnet-worker-1")).isEqualTo("dgx1-b");
  }

  /** A running pod of priority 100 on {@code node} holding whole GPUs {@code gpus}, kept by a finalizer until let go. */
  private Pod lowOn(PodBuilder pod, String node, String gpus) {
    return admin.resource(pod.editMetadata().addToAnnotations(GpuAnnotations.GPU_INDICES, gpus).addToFinalizers("gpu-admission.io/test-kubelet").endMetadata()
        .editSpec().withNodeName(node).withPriority(100).endSpec().build()).create();
  }

  private void letGo(String name) {
    admin.pods().inNamespace(NS).withName(name).edit(p -> new PodBuilder(p).editMetadata().withFinalizers(List.of()).endMetadata().build());
  }

  private String nominated(String name) {
    var pod = admin.pods().inNamespace(NS).withName(name).get();
    return pod == null || pod.getStatus() == null ? null : pod.getStatus().getNominatedNodeName();
  }

  private boolean terminating(String name) {
    var pod = admin.pods().inNamespace(NS).withName(name).get();
    return pod != null && pod.getMetadata().getDeletionTimestamp() != null;
  }

  @Test
  void aHighPriorityGangPreemptsALowGangWholeAndIsPlannedWhereItsVictimsWere() {
    // Issue 29, item 4. dgx1-a: a low gang of two 4-GPU members. dgx1-b: GPUs 0-5 for a pod of
    // priority 2000, GPU 6 for a low single-GPU pod, GPU 7 free.
    var replica = leader();
    for (int i = 0; i < 2; i++) {
      var template = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("gang/bert-worker.yaml")), Pod.class);
      lowOn(new PodBuilder(template).editMetadata().withName("low-worker-" + i).addToLabels("gpu-topology", "low").addToLabels("gpu-topology-replica", "2")
          .endMetadata().editSpec().editFirstContainer().editResources().addToLimits("aliyun.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("4"))
          .endResources().endContainer().endSpec(), "dgx1-a", i == 0 ? "0,1,2,3" : "4,5,6,7");
    }
    var important = new PodBuilder().withNewMetadata().withName("important").withNamespace(NS).endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("cuda")
        .withNewResources().addToLimits("aliyun.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("6")).endResources().endContainer().endSpec();
    admin.resource(important.editMetadata().addToAnnotations(GpuAnnotations.GPU_INDICES, "0,1,2,3,4,5").endMetadata()
        .editSpec().withNodeName("dgx1-b").withPriority(2000).endSpec().build()).create();
    lowOn(new PodBuilder().withNewMetadata().withName("single").withNamespace(NS).endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("cuda")
        .withNewResources().addToLimits("aliyun.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("1")).endResources().endContainer().endSpec(), "dgx1-b", "6");
    await().atMost(Duration.ofSeconds(5)).until(() -> replica.ledger.claimsOn("dgx1-a").size() == 2 && replica.ledger.claimsOn("dgx1-b").size() == 2);

    // A gang of two 4-GPU members of priority 1000: no room (3 GPUs free) until pods of lower priority go.
    for (int i = 0; i < 2; i++) {
      member("bert", i, "2", 4, b -> b.editSpec().addToNodeSelector(V100).withPriority(1000).endSpec());
    }

    // The leader plans it as if they were gone: both members on dgx1-a, whose low gang goes whole;
    // the single pod on dgx1-b stays. Each member is nominated to dgx1-a.
    await().atMost(Duration.ofSeconds(10)).until(() -> terminating("low-worker-0") && terminating("low-worker-1")
        && "dgx1-a".equals(nominated("bert-worker-0")) && "dgx1-a".equals(nominated("bert-worker-1")));
    var message = "gang \"ml/bert\" preempted ml/low-worker-0, ml/low-worker-1 to free dgx1-a GPUs 0,1,2,3, dgx1-a GPUs 4,5,6,7;"
        + " each member is nominated to its node, and the gang is planned there once they are gone";
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(events("Preempting")).containsExactly("bert-worker-0: " + message, "bert-worker-1: " + message));
    assertThat(admin.pods().inNamespace(NS).withName("low-worker-0").get().getStatus().getConditions())
        .anyMatch(c -> "DisruptionTarget".equals(c.getType()) && "PreemptionByScheduler".equals(c.getReason()));
    // While the victims terminate nothing more goes, and no plan is made.
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> !terminating("single") && events("Preempting").size() == 2);
    assertThat(plans("bert", 2).values()).containsOnly("");

    // The kubelet lets the low gang go: the gang is planned on the GPUs it freed and binds there.
    letGo("low-worker-0");
    letGo("low-worker-1");
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 2).containsValue(""));
    assertThat(plans("bert", 2).values()).containsExactly("dgx1-a GPUs 0,1,2,3", "dgx1-a GPUs 4,5,6,7");
    assertThat(replica.schedule("bert-worker-0")).isEqualTo("dgx1-a");
    assertThat(replica.schedule("bert-worker-1")).isEqualTo("dgx1-a");
  }

  @Test
  void aGangThatNoPreemptionCanPlaceEvictsNobody() {
    // Both V100 boards full with pods of priority 2000: nothing the gang may evict makes room.
    var replica = leader();
    for (var node : List.of("dgx1-a", "dgx1-b")) {
      admin.resource(new PodBuilder().withNewMetadata().withName("top-" + node).withNamespace(NS)
          .addToAnnotations(GpuAnnotations.GPU_INDICES, "0,1,2,3,4,5,6,7").endMetadata()
          .withNewSpec().withNodeName(node).withPriority(2000).addNewContainer().withName("c").withImage("cuda")
          .withNewResources().addToLimits("aliyun.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("8")).endResources()
          .endContainer().endSpec().build()).create();
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> replica.ledger.claimsOn("dgx1-a").size() == 1 && replica.ledger.claimsOn("dgx1-b").size() == 1);
    for (int i = 0; i < 2; i++) {
      member("bert", i, "2", 4, b -> b.editSpec().addToNodeSelector(V100).withPriority(1000).endSpec());
    }
    var reason = "gang \"ml/bert\": needs 2 × 4 GPUs, the cluster has room for 0 (on the 2 nodes its members may run on)";
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(unresolvable(replica.filter("bert-worker-0"))).isEqualTo(allNodes(reason)));
    replica.coordinator.reconcile();
    assertThat(events("Preempting")).isEmpty();
    assertThat(admin.pods().inNamespace(NS).list().getItems()).noneMatch(p -> p.getMetadata().getDeletionTimestamp() != null
        || p.getStatus() != null && p.getStatus().getNominatedNodeName() != null);
  }

  @Test
  void aPlanNotBoundInTimeIsReleasedAndMadeAgainAwayFromTheNodeThatRefusedIt() {
    var replica = replica("replica-a", Duration.ofSeconds(2));
    await().atMost(Duration.ofSeconds(20)).until(() -> replica.gate.leading() && replica.ledger.nodes().size() == 5);
    member("bert", 0, "2", 4, V100);
    member("bert", 1, "2", 4, V100);
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 2).containsValue(""));
    assertThat(plans("bert", 2).values()).containsExactly("dgx1-a GPUs 0,1,2,3", "dgx1-a GPUs 4,5,6,7");

    // Nobody binds them (as if kube-scheduler's own filters refused dgx1-a): after 2 s the plan
    // is released and made again without dgx1-a.
    await().atMost(Duration.ofSeconds(10)).until(() -> plans("bert", 2).values().stream().allMatch(p -> p.startsWith("dgx1-b")));
    assertThat(plans("bert", 2).values()).containsExactly("dgx1-b GPUs 0,1,2,3", "dgx1-b GPUs 4,5,6,7");
    assertThat(replica.counter("gpu_admission_gang_plans_total", "outcome", "timed_out")).isEqualTo(1);
    assertThat(replica.counter("gpu_admission_gang_plans_total", "outcome", "released")).isZero();
    await().atMost(Duration.ofSeconds(5)).until(() -> events("GangPlanReleased").size() == 2);
    assertThat(events("GangPlanReleased")).contains(
        "bert-worker-0: gang \"ml/bert\": plan released: its members were not all bound within 2s");
    // The remade plan holds its GPUs once; the old ones are free.
    assertThat(replica.ledger.claimsOn("dgx1-a")).isEmpty();
    assertThat(replica.ledger.claimsOn("dgx1-b")).hasSize(2);
  }

  @Test
  void aGpuThatTurnsUnhealthyReleasesThePlanAtOnce() {
    var replica = leader();
    member("bert", 0, "2", 4, V100);
    member("bert", 1, "2", 4, V100);
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 2).containsValue(""));
    admin.resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder().withNewMetadata().withName("unhealthy-gpu-dgx1-a")
        .withNamespace("kube-system").endMetadata().addToData("gpus", "2").build()).create();

    await().atMost(Duration.ofSeconds(10)).until(() -> plans("bert", 2).values().stream().allMatch(p -> p.startsWith("dgx1-b")));
    assertThat(events("GangPlanReleased")).contains("bert-worker-0: gang \"ml/bert\": plan released: GPU 2 of dgx1-a became unhealthy");
  }

  @Test
  void aMasterAndAWorkerWithDifferentAffinityAreEachPlannedWhereTheirOwnAffinityAllows() {
    var replica = leader();
    for (var index : List.of(0, 1)) {
      var node = index == 0 ? "dgx1-b" : "hgx-h100-a";
      member("aff", index, "2", 2, b -> b.editSpec().withNewAffinity().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
          .addNewNodeSelectorTerm().addNewMatchField().withKey("metadata.name").withOperator("In").withValues(node).endMatchField().endNodeSelectorTerm()
          .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().endAffinity().endSpec());
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("aff", 2).containsValue(""));
    assertThat(plans("aff", 2).values()).containsExactly("dgx1-b GPUs 0,3", "hgx-h100-a GPUs 0,1");
    assertThat(replica.schedule("aff-worker-1")).isEqualTo("hgx-h100-a");
  }

  @Test
  void membersOnTheHostNetworkGetOneNodeEachAndAvoidNodesWhereTheirPortIsTaken() {
    var replica = leader();
    for (var job : List.of("pa", "pb")) {
      portMember(job, 0);
      portMember(job, 1);
      if (job.equals("pa")) {
        await().atMost(Duration.ofSeconds(10)).until(() -> !plans("pa", 2).containsValue(""));
        assertThat(plans("pa", 2).values()).containsExactly("dgx1-a GPU 0", "dgx1-b GPU 0");
        assertThat(replica.schedule("pa-worker-0")).isEqualTo("dgx1-a");
        assertThat(replica.schedule("pa-worker-1")).isEqualTo("dgx1-b");
      }
    }
    // pa holds port 23456 on two of the three pool nodes: pb's two members fit on one only.
    var reason = "gang \"ml/pb\": needs 2 × 1 GPU, one per node (the members use host ports), the cluster has room for 1"
        + " (on the 1 node its members may run on)";
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(unresolvable(replica.filter("pb-worker-0"))).isEqualTo(allNodes(reason)));
    assertThat(plans("pb", 2).values()).containsOnly("");
  }

  @Test
  void aMemberDeletedBeforeBindingReleasesThePlanAndABoundMemberKeepsItsGpus() {
    var replica = leader();
    for (int i = 0; i < 3; i++) {
      member("bert", i, "3", 2, V100);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 3).containsValue(""));
    assertThat(replica.schedule("bert-worker-0")).isEqualTo("dgx1-a");

    admin.pods().inNamespace(NS).withName("bert-worker-2").delete();
    await().atMost(Duration.ofSeconds(10)).until(() -> plans("bert", 2).get("bert-worker-1").isEmpty());
    assertThat(unresolvable(replica.filter("bert-worker-1"))).isEqualTo(allNodes("gang \"ml/bert\": 2 of 3 members exist, waiting for the rest"));
    await().atMost(Duration.ofSeconds(5)).until(() -> replica.ledger.claims().size() == 1);
    var kept = replica.ledger.claims().values().iterator().next();
    assertThat(kept.pod()).isEqualTo("ml/bert-worker-0");
    assertThat(kept.gpus()).containsExactly(0, 3);
    assertThat(kept.phase()).isIn(GpuClaim.Phase.ASSUMED, GpuClaim.Phase.BOUND);

    // The replacement completes the gang again: only the two pending members are planned, around the bound one.
    member("bert", 2, "3", 2, V100);
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 3).containsValue(""));
    assertThat(plans("bert", 3)).containsExactly(
        Map.entry("bert-worker-0", "dgx1-a GPUs 0,3"),
        Map.entry("bert-worker-1", "dgx1-a GPUs 1,2"),
        Map.entry("bert-worker-2", "dgx1-a GPUs 4,7"));
    assertThat(replica.schedule("bert-worker-1")).isEqualTo("dgx1-a");
    assertThat(replica.schedule("bert-worker-2")).isEqualTo("dgx1-a");
  }

  @Test
  void membersThatDisagreeAreToldWhyAndNotPlanned() {
    var replica = leader();
    member("odd", 0, "2", 2, V100);
    member("odd", 1, "3", 2, V100);
    var reason = "gang \"ml/odd\": members disagree on gpu-topology-replica: \"2\" (odd-worker-0), \"3\" (odd-worker-1);"
        + " the gang is not placed until its members agree";
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(unresolvable(replica.filter("odd-worker-0"))).isEqualTo(allNodes(reason)));
    replica.coordinator.reconcile();
    assertThat(plans("odd", 2).values()).containsOnly("");
    assertThat(replica.gauge("disagreeing")).isEqualTo(1);
  }

  @Test
  void twoReplicasHoldOnePlanAndANewLeaderKeepsIt() {
    var a = replica("replica-a", PLAN_TIMEOUT);
    var b = replica("replica-b", PLAN_TIMEOUT);
    await().atMost(Duration.ofSeconds(20)).until(() -> (a.gate.leading() || b.gate.leading()) && a.ledger.nodes().size() == 5 && b.ledger.nodes().size() == 5);
    for (int i = 0; i < 4; i++) {
      member("bert", i, "4", 2, V100);
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 4).containsValue(""));
    var plan = plans("bert", 4);
    var id = MemberPlan.of(admin.pods().inNamespace(NS).withName("bert-worker-0").get()).orElseThrow().planId();
    await().atMost(Duration.ofSeconds(5)).until(() -> events("GangPlanned").size() == 4);
    assertThat(a.counter("gpu_admission_gang_plans_total", "outcome", "planned") + b.counter("gpu_admission_gang_plans_total", "outcome", "planned")).isEqualTo(1);

    // The follower answers filter from the pods' annotations and holds the planned GPUs too.
    var leader = a.gate.leading() ? a : b;
    var follower = leader == a ? b : a;
    assertThat(follower.filter("bert-worker-2").path("NodeNames")).extracting(JsonNode::asText).containsExactly("dgx1-a");
    await().atMost(Duration.ofSeconds(5)).until(() -> follower.ledger.claimsOn("dgx1-a").size() == 4);

    leader.close();
    replicas.remove(leader);
    await().atMost(Duration.ofSeconds(20)).until(follower.gate::leading);
    follower.coordinator.reconcile();
    assertThat(plans("bert", 4)).isEqualTo(plan);
    assertThat(MemberPlan.of(admin.pods().inNamespace(NS).withName("bert-worker-0").get()).orElseThrow().planId()).isEqualTo(id);
    for (int i = 0; i < 4; i++) {
      assertThat(follower.schedule("bert-worker-" + i)).isEqualTo("dgx1-a");
    }
    var indices = new ArrayList<String>();
    for (int i = 0; i < 4; i++) {
      indices.add(admin.pods().inNamespace(NS).withName("bert-worker-" + i).get().getMetadata().getAnnotations().get(GpuAnnotations.GPU_INDICES));
    }
    assertThat(indices).containsExactly("0,3", "1,2", "4,7", "5,6");
    assertThat(Set.copyOf(events("GangPlanned"))).hasSize(4);
  }

  @Test
  void aCordonedPlannedNodeReleasesThePlanAtOnce() {
    var replica = leader();
    member("bert", 0, "2", 4, V100);
    member("bert", 1, "2", 4, V100);
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 2).containsValue(""));
    assertThat(plans("bert", 2).values()).allMatch(p -> p.startsWith("dgx1-a"));
    admin.nodes().withName("dgx1-a").edit(n -> new io.fabric8.kubernetes.api.model.NodeBuilder(n).editOrNewSpec().withUnschedulable(true).endSpec().build());

    await().atMost(Duration.ofSeconds(10)).until(() -> plans("bert", 2).values().stream().allMatch(p -> p.startsWith("dgx1-b")));
    assertThat(events("GangPlanReleased")).contains("bert-worker-0: gang \"ml/bert\": plan released: node dgx1-a can no longer take"
        + " bert-worker-0 (deleted, cordoned, tainted or relabelled)");
    assertThat(replica.counter("gpu_admission_gang_plans_total", "outcome", "timed_out")).isZero();
  }

  @Test
  void aPlannedPodThatLeavesItsGangGivesItsGpusBack() {
    var replica = leader();
    member("bert", 0, "2", 4, V100);
    member("bert", 1, "2", 4, V100);
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("bert", 2).containsValue(""));
    admin.pods().inNamespace(NS).withName("bert-worker-1").edit(p -> new PodBuilder(p).editMetadata().removeFromLabels("gpu-topology").endMetadata().build());

    await().atMost(Duration.ofSeconds(10)).until(() -> plans("bert", 2).values().stream().allMatch(String::isEmpty));
    await().atMost(Duration.ofSeconds(5)).until(() -> replica.ledger.claims().isEmpty());
  }

  @Test
  void twoGangsOnTheHostNetworkPlannedTogetherNeverShareANode() {
    var replica = leader();
    for (var job : List.of("pa", "pz")) {
      portMember(job, 0);
      portMember(job, 1);
    }
    // Three pool nodes, four members that each need port 23456: one gang is planned, the other has room for one.
    await().atMost(Duration.ofSeconds(10)).until(() -> !plans("pa", 2).containsValue("") || !plans("pz", 2).containsValue(""));
    replica.coordinator.reconcile();
    // Gangs are planned in name order: pa takes two nodes, pz (needing two) is left with hgx-h100-a alone.
    assertThat(plans("pa", 2).values()).containsExactly("dgx1-a GPU 0", "dgx1-b GPU 0");
    assertThat(plans("pz", 2).values()).containsExactly("", "");
    assertThat(unresolvable(replica.filter("pz-worker-0"))).isEqualTo(allNodes("gang \"ml/pz\": needs 2 × 1 GPU, one per node"
        + " (the members use host ports), the cluster has room for 1 (on the 1 node its members may run on)"));
  }
}
