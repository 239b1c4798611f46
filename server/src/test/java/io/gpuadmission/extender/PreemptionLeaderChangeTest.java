package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangRegistry;
import io.gpuadmission.placement.BindingApiServer;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.preemption.GpuPreemptor;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.support.Fixtures;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The placement leader preempts after a delay that follows filter's refusal; the Lease moving in
 * that delay must not lose the preemption. Two replicas on the mock API server with the Lease
 * handed over by hand (their gates), the pods of issue 22 item 5: six 12 GiB pods of priority 100
 * on six 16 GiB GPUs, and a pod of priority 1000 asking 8 GiB.
 */
class PreemptionLeaderChangeTest {
  private static final String NS = "prio";
  private static final List<String> NODES = List.of("share-a", "share-b", "share-c");

  private BindingApiServer.Started api;
  private KubernetesClient admin;
  private Replica a;
  private Replica b;

  /** One replica: informer, ledger, pod facts, gate and extender service with its preemptor. */
  private final class Replica implements AutoCloseable {
    final KubernetesClient client;
    final GpuLedger ledger = new GpuLedger();
    final PolicyStore policies = new PolicyStore();
    final PodFactsIndex facts;
    final LeaderGate gate;
    final LedgerWatcher watcher;
    final ExtenderService service;

    Replica(String identity) {
      client = api.client(identity);
      policies.replace(PolicyParser.builtInDefault(), PolicyStore.PolicySource.DEFAULT);
      facts = new PodFactsIndex(policies::current, ledger);
      gate = new LeaderGate(identity);
      var decider = new PlacementDecider(ledger, policies::current);
      var gangs = new GangRegistry(policies::current);
      watcher = new LedgerWatcher(client, ledger, policies::current).alsoTell(facts::current, facts::gone).start();
      var planning = new GangPlanning(decider, ledger, watcher::nodes, gangs);
      service = Services.with(decider, new GangGate(gangs, planning, policies::current, Duration.ofMinutes(1)), policies, ledger, facts, client, gate);
    }

    /** Takes the Lease: renewed, ledger read, gate open (as PlacementLeadership does). */
    void lead() {
      gate.renewed(Instant.now().plus(Duration.ofMinutes(5)));
      gate.lead();
    }

    JsonNode filter(Pod pod) {
      var json = KubernetesJson.mapper().createObjectNode();
      json.set("Pod", KubernetesJson.mapper().valueToTree(pod));
      var names = json.putArray("NodeNames");
      NODES.forEach(names::add);
      var args = ExtenderCodec.args(json.toString().getBytes(StandardCharsets.UTF_8));
      return KubernetesJson.mapper().valueToTree(service.filter(args));
    }

    @Override
    public void close() {
      gate.stepDown();
      watcher.close();
      client.close();
    }
  }

  @BeforeEach
  void sixLowPodsFillEveryGpu() {
    api = BindingApiServer.start();
    admin = api.client();
    for (var file : List.of("preemption/nodes.yaml", "preemption/low-pods.yaml")) {
      for (HasMetadata item : KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(file)), KubernetesList.class).getItems()) {
        admin.resource(item).create();
      }
    }
    a = new Replica("replica-a");
    b = new Replica("replica-b");
    for (var replica : List.of(a, b)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> NODES.stream().allMatch(n -> replica.ledger.claimsOn(n).size() == 2));
    }
  }

  @AfterEach
  void stop() {
    a.close();
    b.close();
    admin.close();
    api.server().destroy();
  }

  @Test
  void aPreemptionWaitingWhenTheLeaseMovesIsMadeByTheNewLeader() {
    a.lead();
    var high = admin.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("preemption/pod-high-8g.yaml")), Pod.class)).create();
    await().atMost(Duration.ofSeconds(5)).until(() -> b.facts.facts(high.getMetadata().getUid()).isPresent());

    // A refuses it everywhere and would preempt after its delay, but the Lease moves to B first.
    assertThat(a.filter(high).path("FailedNodes").path("share-c").asText()).isEqualTo("largest free GPU has 4GiB of aliyun.com/gpu-mem, pod needs 8GiB");
    a.gate.stepDown();
    b.lead();

    // B never saw that filter: it has kube-scheduler try the pod again (an update of the pending pod).
    await().atMost(Duration.ofSeconds(5)).until(() -> pod("high-8g").getMetadata().getAnnotations().containsKey(GpuPreemptor.REQUEUED));
    assertThat(pod("high-8g").getMetadata().getAnnotations().get(GpuPreemptor.REQUEUED)).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,3})?Z");
    // Pods that cannot preempt are left alone: the bound ones.
    assertThat(pod("low-0").getMetadata().getAnnotations()).doesNotContainKey(GpuPreemptor.REQUEUED);

    // kube-scheduler's next attempt reaches B, which preempts the youngest low pod on share-c.
    assertThat(b.filter(pod("high-8g")).path("NodeNames").toString()).isEqualTo("[]");
    await().atMost(Duration.ofSeconds(10)).until(() -> "share-c".equals(pod("high-8g").getStatus().getNominatedNodeName()));
    assertThat(admin.pods().inNamespace(NS).list().getItems())
        .filteredOn(p -> p.getMetadata().getDeletionTimestamp() != null)
        .extracting(p -> p.getMetadata().getName())
        .containsExactly("low-5");
  }

  @Test
  void aNewLeaderLeavesAPodAloneThatCannotPreempt() {
    var never = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("preemption/pod-high-8g.yaml")), Pod.class);
    never.getSpec().setPreemptionPolicy("Never");
    var pod = admin.resource(never).create();
    await().atMost(Duration.ofSeconds(5)).until(() -> b.facts.facts(pod.getMetadata().getUid()).isPresent());
    b.lead();
    await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2))
        .until(() -> !pod("high-8g").getMetadata().getAnnotations().containsKey(GpuPreemptor.REQUEUED));
  }

  private Pod pod(String name) {
    return admin.pods().inNamespace(NS).withName(name).get();
  }
}
