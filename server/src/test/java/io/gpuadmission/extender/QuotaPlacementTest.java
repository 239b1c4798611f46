package io.gpuadmission.extender;

import static io.gpuadmission.extender.SchedulerCalls.args;
import static io.gpuadmission.extender.SchedulerCalls.json;
import static io.gpuadmission.extender.SchedulerCalls.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.cluster.QuotaTreeStore;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.HeldRoom;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.policy.PolicyStore.PolicySource;
import io.gpuadmission.preemption.DisruptionBudgets;
import io.gpuadmission.preemption.PodFacts;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 43 through the extender's HTTPS API as kube-scheduler calls it, on the mock API server:
 * three teams' ElasticQuotaTree over two nodes of four whole GPUs and a cGPU node. A pod over its
 * team's max waits with the quota's reason while another team's identical pod passes; a team
 * borrows up to its max while the others are idle; pods another scheduler bound without
 * annotations count toward their team's max; a team under its min takes borrowed GPUs back
 * (reclaim), evicting no second borrower after the cool-down while its first victim is still
 * terminating, and sparing a pod whose PodDisruptionBudget allows no disruption when another way
 * needs none; a gang over its team's max waits whole; GPU memory shares and whole GPUs count in one
 * tree.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class QuotaPlacementTest {
  private static final Duration WITHIN = Duration.ofSeconds(10);

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;
  @Inject QuotaTreeStore trees;
  @Inject PolicyStore policies;
  @Inject DisruptionBudgets budgets;

  @ConfigProperty(name = "gpu-admission.quotas.reclaim-cool-down")
  Duration coolDown;

  @BeforeEach
  void threeTeams() {
    QuotaCluster.create(client, ledger);
    QuotaCluster.apply(client, QuotaCluster.tree("quota/tree.yaml"));
    await().atMost(WITHIN).until(() -> trees.tree().isPresent());
    await().atMost(Duration.ofSeconds(20)).until(gate::leading);
  }

  @AfterEach
  void removeEverything() {
    if (policies.active().source() != PolicySource.DEFAULT) {
      policies.replace(PolicyParser.builtInDefault(), PolicySource.DEFAULT);
    }
    for (var namespace : QuotaCluster.NAMESPACES) {
      for (var pod : client.pods().inNamespace(namespace).list().getItems()) {
        if (pod.getMetadata().getFinalizers() != null && !pod.getMetadata().getFinalizers().isEmpty()) {
          client.pods().inNamespace(namespace).withName(pod.getMetadata().getName()).edit(p -> {
            p.getMetadata().setFinalizers(new ArrayList<>());
            return p;
          });
        }
      }
    }
    client.policy().v1().podDisruptionBudget().inNamespace("quota-b").delete();
    await().atMost(WITHIN).until(() -> budgets.allowed().isEmpty());
    QuotaCluster.remove(client, ledger);
    await().atMost(WITHIN).until(() -> trees.tree().isEmpty());
  }

  @Test
  void aPodOverItsTeamsMaxWaitsWithTheQuotasReasonWhileAnotherTeamsIdenticalPodPasses() {
    running(QuotaCluster.whole("quota-a", "a-0", 2), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(QuotaCluster.whole("quota-a", "a-1", 2), "whole-a", "2,3", 0, "2026-11-22T10:01:00Z");

    var refused = filter(create(QuotaCluster.whole("quota-a", "train-a", 4)));
    var reason = "quota team-a: nvidia.com/gpu used 4 + asked 4 > max 6";
    assertThat(refused.path("NodeNames").toString()).isEqualTo("[]");
    assertThat(refused.path("FailedNodes").toString()).isEqualTo("{}");
    assertThat(refused.path("FailedAndUnresolvableNodes"))
        .isEqualTo(json("{\"whole-a\":\"" + reason + "\",\"whole-b\":\"" + reason + "\",\"share-q\":\"" + reason + "\"}"));

    var other = filter(create(QuotaCluster.whole("quota-c", "train-c", 4)));
    assertThat(other.path("NodeNames").toString()).isEqualTo("[\"whole-b\"]");
  }

  @Test
  void aTeamAtItsMaxByPodsAnotherSchedulerBoundWithoutAnnotationsWaitsWithTheQuotasReason() {
    boundElsewhere(QuotaCluster.whole("quota-a", "elsewhere-0", 2), "whole-a");
    boundElsewhere(QuotaCluster.whole("quota-a", "elsewhere-1", 4), "whole-b");
    await().atMost(WITHIN).until(() -> inspected("team-a").path("used").path("nvidia.com/gpu").asText().equals("6"));
    assertThat(QuotaCluster.NODES.stream().allMatch(n -> ledger.claimsOn(n).isEmpty())).isTrue();

    var refused = filter(create(QuotaCluster.whole("quota-a", "train-a", 1)));
    var reason = "quota team-a: nvidia.com/gpu used 6 + asked 1 > max 6";
    assertThat(refused.path("NodeNames").toString()).isEqualTo("[]");
    assertThat(refused.path("FailedAndUnresolvableNodes"))
        .isEqualTo(json("{\"whole-a\":\"" + reason + "\",\"whole-b\":\"" + reason + "\",\"share-q\":\"" + reason + "\"}"));
    assertThat(inspected("root").path("used").path("nvidia.com/gpu").asText()).isEqualTo("6");
  }

  @Test
  void aTeamBorrowsUpToItsMaxWhileTheOthersAreIdleAndNoFurther() {
    running(QuotaCluster.whole("quota-b", "b-0", 4), "whole-a", "0,1,2,3", 0, "2026-11-22T10:00:00Z");

    var borrowing = create(QuotaCluster.whole("quota-b", "b-1", 4));
    assertThat(filter(borrowing).path("NodeNames").toString()).isEqualTo("[\"whole-b\"]");
    assertThat(json(post(base, "/extender/bind", SchedulerCalls.bind(borrowing, "whole-b")))).isEqualTo(json("{\"Error\":\"\"}"));
    await().atMost(WITHIN).until(() -> ledger.claimsOn("whole-b").size() == 1);

    var reason = "quota team-b: nvidia.com/gpu used 8 + asked 1 > max 8";
    var beyond = filter(create(QuotaCluster.whole("quota-b", "b-2", 1)));
    assertThat(beyond.path("NodeNames").toString()).isEqualTo("[]");
    assertThat(beyond.path("FailedAndUnresolvableNodes").path("whole-a").asText()).isEqualTo(reason);
    assertThat(inspected("team-b").path("used").path("nvidia.com/gpu").asText()).isEqualTo("8");
    assertThat(inspected("team-b").path("borrowed").path("nvidia.com/gpu").asText()).isEqualTo("4");
  }

  @Test
  void aTeamUnderItsMinTakesBorrowedGpusBackFromTheYoungestLowestPriorityBorrowerNeverFromATeamAtItsMin() {
    // team-a at its min (2) with the lowest priority of all; team-b borrows 2 above its min of 4.
    running(kept(QuotaCluster.whole("quota-a", "a-0", 2)), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-1", 2)), "whole-a", "2,3", 100, "2026-11-22T10:01:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-2", 2)), "whole-b", "0,1", 100, "2026-11-22T10:05:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-3", 2)), "whole-b", "2,3", 500, "2026-11-22T10:02:00Z");

    // Counters of the application's life, which the other tests of this class share.
    var reclaimsBefore = counter("gpu_admission_quota_reclaims_total");
    var victimsBefore = counter("gpu_admission_quota_reclaim_victims_total");
    var pending = create(QuotaCluster.whole("quota-c", "c-0", 2));
    var refused = filter(pending);
    assertThat(refused.path("FailedAndUnresolvableNodes").path("whole-b").asText())
        .isEqualTo("quota root: nvidia.com/gpu used 8 + asked 2 > max 8");

    await().atMost(WITHIN).until(() -> pod("quota-b", "b-2").getMetadata().getDeletionTimestamp() != null
        && pod("quota-c", "c-0").getStatus() != null && "whole-b".equals(pod("quota-c", "c-0").getStatus().getNominatedNodeName()));
    assertThat(counter("gpu_admission_quota_reclaims_total")).isEqualTo(reclaimsBefore + 1);
    assertThat(counter("gpu_admission_quota_reclaim_victims_total")).isEqualTo(victimsBefore + 1);
    var message = "quota team-c took back its GPUs on node whole-b for pod quota-c/c-0 (under its min; quota team-b was borrowing them)";
    assertThat(disruptionTarget(pod("quota-b", "b-2")))
        .extracting(PodCondition::getStatus, PodCondition::getReason, PodCondition::getMessage)
        .containsExactly("True", PodFacts.PREEMPTION_BY_SCHEDULER, "gpu-admission: " + message);
    await().atMost(WITHIN).until(() -> events("quota-b", "b-2").contains("QuotaReclaimed: " + message));
    assertThat(List.of(pod("quota-a", "a-0"), pod("quota-b", "b-1"), pod("quota-b", "b-3")))
        .allSatisfy(untouched -> assertThat(untouched.getMetadata().getDeletionTimestamp()).isNull());
    await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> pod("quota-a", "a-0").getMetadata().getDeletionTimestamp() == null
        && pod("quota-b", "b-1").getMetadata().getDeletionTimestamp() == null && pod("quota-b", "b-3").getMetadata().getDeletionTimestamp() == null);

    // The kubelet lets b-2 go: team-c's pod fits there, within its min.
    letGo("quota-b", "b-2");
    await().atMost(WITHIN).until(() -> ledger.claimsOn("whole-b").size() == 1);
    assertThat(filter(pod("quota-c", "c-0")).path("NodeNames").toString()).isEqualTo("[\"whole-b\"]");
  }

  /**
   * kube-scheduler clears the nomination of a pod whose retry finds no victim while reclaim's are
   * still terminating; the room reclaim freed stays the pod's all the same: once the victim is gone,
   * its team's replacement pod is refused by the quota the waiting pod now counts in, and the
   * waiting pod passes there.
   */
  @Test
  void theRoomReclaimFreedStaysTheWaitingPodsWhenKubeSchedulerClearsItsNomination() {
    running(kept(QuotaCluster.whole("quota-a", "a-0", 2)), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-1", 2)), "whole-a", "2,3", 100, "2026-11-22T10:01:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-2", 2)), "whole-b", "0,1", 100, "2026-11-22T10:05:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-3", 2)), "whole-b", "2,3", 500, "2026-11-22T10:02:00Z");
    var pending = create(QuotaCluster.whole("quota-c", "c-0", 2));
    var before = java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    filter(pending);
    await().atMost(WITHIN).until(() -> terminating("quota-b", "b-2") && "whole-b".equals(nominated("quota-c", "c-0")));
    // Written on the pod, for the other replicas and the next leader: two cool-downs from the reclaim.
    var room = HeldRoom.of(pod("quota-c", "c-0")).orElseThrow();
    assertThat(room.node()).isEqualTo("whole-b");
    assertThat(room.until()).isBetween(before.plus(coolDown.multipliedBy(2)), java.time.Instant.now().plus(coolDown.multipliedBy(2)));

    client.pods().inNamespace("quota-c").withName("c-0").subresource("status")
        .patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"status\":{\"nominatedNodeName\":null}}");
    await().atMost(WITHIN).until(() -> nominated("quota-c", "c-0") == null);
    letGo("quota-b", "b-2");
    await().atMost(WITHIN).until(() -> ledger.claimsOn("whole-b").size() == 1);

    var replacement = create(QuotaCluster.whole("quota-b", "b-4", 2));
    var refused = filter(replacement);
    assertThat(refused.path("NodeNames").toString()).isEqualTo("[]");
    assertThat(refused.path("FailedAndUnresolvableNodes").path("whole-b").asText()).isEqualTo("quota root: nvidia.com/gpu used 8 + asked 2 > max 8");
    assertThat(inspected("team-c").path("used").path("nvidia.com/gpu").asText()).isEqualTo("2");
    assertThat(filter(pod("quota-c", "c-0")).path("NodeNames").toString()).isEqualTo("[\"whole-b\"]");
  }

  /**
   * The replica that reclaimed the room is gone (a failover while the victim terminated): this
   * one, which evicted nobody, holds the room from the pod's condition alone, so that the
   * borrower's replacement pod is refused by the quota the waiting pod counts in, nobody more is
   * evicted, and the waiting pod passes there.
   */
  @Test
  void theRoomAnotherLeaderReclaimedIsHeldFromThePodAlone() {
    running(kept(QuotaCluster.whole("quota-a", "a-0", 2)), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-1", 2)), "whole-a", "2,3", 100, "2026-11-22T10:01:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-3", 2)), "whole-b", "2,3", 500, "2026-11-22T10:02:00Z");
    var waiting = QuotaCluster.whole("quota-c", "c-0", 2);
    var room = new HeldRoom("whole-b", java.time.Instant.now().plus(Duration.ofMinutes(2)));
    waiting.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Pending")
        .withConditions(room.condition(java.time.Instant.now())).build());
    create(waiting);
    await().atMost(WITHIN).until(() -> "2".equals(inspected("team-c").path("used").path("nvidia.com/gpu").asText()));

    var replacement = create(QuotaCluster.whole("quota-b", "b-4", 2));
    var refused = filter(replacement);
    assertThat(refused.path("NodeNames").toString()).isEqualTo("[]");
    assertThat(refused.path("FailedAndUnresolvableNodes").path("whole-b").asText()).isEqualTo("quota root: nvidia.com/gpu used 8 + asked 2 > max 8");
    assertThat(filter(pod("quota-c", "c-0")).path("NodeNames").toString()).isEqualTo("[\"whole-b\"]");
    await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> !terminating("quota-a", "a-0")
        && !terminating("quota-b", "b-1") && !terminating("quota-b", "b-3"));
  }

  /**
   * kube-scheduler chooses preemption victims by priority alone; its preempt verb call lets the
   * extender drop every node whose victims break a team quota: a borrowing team's high-priority pod
   * takes no other team's GPUs (team-c at its min, team-b under it), only its own team's; a team
   * under its min takes a borrower's as long as the borrower keeps its own min.
   */
  @Test
  void kubeSchedulersPriorityPreemptionTakesNoTeamsGpusForABorrowerOnlyItsOwnTeams() {
    running(QuotaCluster.whole("quota-c", "c-0", 2), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(QuotaCluster.whole("quota-a", "a-0", 2), "whole-a", "2,3", 0, "2026-11-22T10:01:00Z");
    running(QuotaCluster.whole("quota-b", "b-1", 2), "whole-b", "0,1", 0, "2026-11-22T10:02:00Z");
    running(QuotaCluster.whole("quota-a", "a-1", 2), "whole-b", "2,3", 0, "2026-11-22T10:03:00Z");
    var urgent = QuotaCluster.whole("quota-a", "urgent-a", 2);
    urgent.getSpec().setPriority(1000);
    urgent = create(urgent);

    // team-a would hold 6 of its min 2 with this pod: kube-scheduler's victims of team-c and team-b are refused.
    var answer = json(post(base, "/extender/preempt", preemptArgs(urgent, Map.of("whole-a", List.of("quota-c/c-0"), "whole-b", List.of("quota-b/b-1")))));
    assertThat(answer).isEqualTo(json("{\"NodeNameToMetaVictims\":{}}"));
    var own = json(post(base, "/extender/preempt", preemptArgs(urgent, Map.of("whole-a", List.of("quota-c/c-0"), "whole-b", List.of("quota-a/a-1")))));
    assertThat(own).isEqualTo(json("{\"NodeNameToMetaVictims\":{\"whole-b\":{\"Pods\":[{\"UID\":\"" + uid("quota-a", "a-1")
        + "\"}],\"NumPDBViolations\":0}}}"));

    // team-b, under its min, may take a-1 (team-a keeps 2 of its min 2), never both of team-a's pods.
    var underMin = QuotaCluster.whole("quota-b", "urgent-b", 2);
    underMin.getSpec().setPriority(1000);
    underMin = create(underMin);
    assertThat(json(post(base, "/extender/preempt", preemptArgs(underMin, Map.of("whole-b", List.of("quota-a/a-1"))))))
        .isEqualTo(json("{\"NodeNameToMetaVictims\":{\"whole-b\":{\"Pods\":[{\"UID\":\"" + uid("quota-a", "a-1")
            + "\"}],\"NumPDBViolations\":0}}}"));
  }

  /** kube-scheduler's ProcessPreemption arguments: its victims (namespace/name) per node. */
  private String preemptArgs(Pod pod, Map<String, List<String>> victims) {
    var nodes = new StringBuilder();
    new java.util.TreeMap<>(victims).forEach((node, names) -> {
      nodes.append(nodes.isEmpty() ? "" : ",").append('"').append(node).append("\":{\"Pods\":[");
      for (int i = 0; i < names.size(); i++) {
        var victim = names.get(i).split("/");
        nodes.append(i == 0 ? "" : ",").append("{\"UID\":\"").append(uid(victim[0], victim[1])).append("\"}");
      }
      nodes.append("],\"NumPDBViolations\":0}");
    });
    return "{\"Pod\":" + KubernetesJson.mapper().valueToTree(pod) + ",\"NodeNameToMetaVictims\":{" + nodes + "}}";
  }

  private String uid(String namespace, String name) {
    return pod(namespace, name).getMetadata().getUid();
  }

  @Test
  void aSecondReclaimAfterTheCoolDownEvictsNoOtherBorrowerWhileTheFirstVictimIsStillTerminating() throws InterruptedException {
    // As above; b-2, the one victim, stays terminating (the kubelet's finalizer) past the cool-down.
    // It left team-b's usage as it started terminating, its GPUs stay taken until it is gone: the
    // pod waits for GPUs, not for a quota. Once b-2 goes, team-b keeps its min of 4 (b-1 and b-3).
    running(kept(QuotaCluster.whole("quota-a", "a-0", 2)), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-1", 2)), "whole-a", "2,3", 100, "2026-11-22T10:01:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-2", 2)), "whole-b", "0,1", 100, "2026-11-22T10:05:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-3", 2)), "whole-b", "2,3", 500, "2026-11-22T10:02:00Z");
    var reason = "quota root: nvidia.com/gpu used 8 + asked 2 > max 8";
    var waiting = json("{\"whole-a\":\"" + reason + "\",\"whole-b\":\"" + reason + "\",\"share-q\":\"" + reason + "\"}");

    var pending = create(QuotaCluster.whole("quota-c", "c-0", 2));
    assertThat(filter(pending).path("FailedAndUnresolvableNodes")).isEqualTo(waiting);
    await().atMost(WITHIN).until(() -> pod("quota-b", "b-2").getMetadata().getDeletionTimestamp() != null
        && pod("quota-c", "c-0").getStatus() != null && "whole-b".equals(pod("quota-c", "c-0").getStatus().getNominatedNodeName()));
    var reclaimed = "QuotaReclaimed: quota team-c took back its GPUs on node whole-b for pod quota-c/c-0"
        + " (under its min; quota team-b was borrowing them)";
    var reclaiming = "QuotaReclaiming: quota team-c is under its min: evicted quota-b/b-2 (borrowing) to free GPUs on node whole-b;"
        + " nominated to whole-b";
    await().atMost(WITHIN).until(() -> eventsOf(pod("quota-b", "b-2")).contains(reclaimed) && eventsOf(pod("quota-c", "c-0")).contains(reclaiming));

    // kube-scheduler filters the pod again after each cool-down: it waits for b-2's GPUs.
    var forGpus = json("{\"whole-a\":\"0 of 4 GPUs free, pod needs 2 whole GPUs\",\"whole-b\":\"0 of 4 GPUs free, pod needs 2 whole GPUs\"}");
    for (var round = 0; round < 2; round++) {
      Thread.sleep(coolDown.plusMillis(200).toMillis());
      assertThat(filter(pod("quota-c", "c-0")).path("FailedNodes")).isEqualTo(forGpus);
      await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> pod("quota-a", "a-0").getMetadata().getDeletionTimestamp() == null
          && pod("quota-b", "b-1").getMetadata().getDeletionTimestamp() == null && pod("quota-b", "b-3").getMetadata().getDeletionTimestamp() == null);
    }
    assertThat(inspected("team-b").path("used").path("nvidia.com/gpu").asText()).isEqualTo("4");
    assertThat(inspected("root").path("used").path("nvidia.com/gpu").asText()).isEqualTo("8");
    // One victim, one Event each: none for the pods that stay, none for a second attempt.
    var pods = List.of(pod("quota-a", "a-0"), pod("quota-b", "b-1"), pod("quota-b", "b-2"), pod("quota-b", "b-3"), pod("quota-c", "c-0"));
    assertThat(pods.stream().flatMap(p -> eventsOf(p).stream().map(event -> p.getMetadata().getName() + " " + event)).toList())
        .containsExactlyInAnyOrder("b-2 " + reclaimed, "c-0 " + reclaiming);

    // The kubelet lets b-2 go: team-c's pod fits there, and team-b is at its min.
    letGo("quota-b", "b-2");
    await().atMost(WITHIN).until(() -> ledger.claimsOn("whole-b").size() == 1);
    assertThat(filter(pod("quota-c", "c-0")).path("NodeNames").toString()).isEqualTo("[\"whole-b\"]");
    assertThat(inspected("team-b").path("used").path("nvidia.com/gpu").asText()).isEqualTo("4");
  }

  @Test
  void reclaimSparesABorrowerWhosePodDisruptionBudgetAllowsNoDisruptionForAnotherThatViolatesNone() {
    // As above, but b-2 (the youngest) serves behind a budget that allows no disruption now.
    var serving = kept(QuotaCluster.whole("quota-b", "b-2", 2));
    serving.getMetadata().setLabels(Map.of("role", "serving"));
    client.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/pdb-serving.yaml")), PodDisruptionBudget.class))
        .create();
    await().atMost(WITHIN).until(() -> Map.of("quota-b/serving", 0).equals(budgets.allowed()));
    running(kept(QuotaCluster.whole("quota-a", "a-0", 2)), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-1", 2)), "whole-a", "2,3", 100, "2026-11-22T10:01:00Z");
    running(serving, "whole-b", "0,1", 100, "2026-11-22T10:05:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-3", 2)), "whole-b", "2,3", 500, "2026-11-22T10:02:00Z");

    var pending = create(QuotaCluster.whole("quota-c", "c-0", 2));
    assertThat(filter(pending).path("NodeNames").toString()).isEqualTo("[]");

    await().atMost(WITHIN).until(() -> pod("quota-b", "b-1").getMetadata().getDeletionTimestamp() != null
        && pod("quota-c", "c-0").getStatus() != null && "whole-a".equals(pod("quota-c", "c-0").getStatus().getNominatedNodeName()));
    var message = "quota team-c took back its GPUs on node whole-a for pod quota-c/c-0 (under its min; quota team-b was borrowing them)";
    await().atMost(WITHIN).until(() -> events("quota-b", "b-1").contains("QuotaReclaimed: " + message));
    await().atMost(WITHIN).until(() -> events("quota-c", "c-0").contains(
        "QuotaReclaiming: quota team-c is under its min: evicted quota-b/b-1 (borrowing) to free GPUs on node whole-a; nominated to whole-a"));
    assertThat(List.of(pod("quota-a", "a-0"), pod("quota-b", "b-2"), pod("quota-b", "b-3")))
        .allSatisfy(untouched -> assertThat(untouched.getMetadata().getDeletionTimestamp()).isNull());
  }

  /**
   * kube-scheduler filters the next pod while earlier ones still bind, and a pod the pod informer
   * has not shown yet holds nothing at filter: two pods that each fit the team's max there arrive
   * at bind together. Bind asks the quota again, with every bind before it counted.
   */
  @Test
  void bindRefusesAPodThatFilterAdmittedOnceTheBindsBeforeItTookTheTeamToItsMax() {
    running(QuotaCluster.whole("quota-a", "a-0", 2), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(QuotaCluster.whole("quota-a", "a-1", 2), "whole-a", "2,3", 0, "2026-11-22T10:01:00Z");
    var first = create(QuotaCluster.whole("quota-a", "a-2", 2));
    var second = create(QuotaCluster.whole("quota-a", "a-3", 2));
    await().atMost(WITHIN).until(() -> ledger.view("whole-b").isPresent());

    assertThat(json(post(base, "/extender/bind", SchedulerCalls.bind(first, "whole-b")))).isEqualTo(json("{\"Error\":\"\"}"));
    assertThat(json(post(base, "/extender/bind", SchedulerCalls.bind(second, "whole-b"))).path("Error").asText())
        .isEqualTo("cannot bind quota-a/a-3 (2 whole GPUs): quota team-a: nvidia.com/gpu used 6 + asked 2 > max 6");
    assertThat(pod("quota-a", "a-3").getSpec().getNodeName()).isNull();
  }

  /**
   * kube-scheduler's own filters found every node full (Insufficient nvidia.com/gpu) and never
   * called the extender's filter; its preemption found no victim of lower priority. The pods it
   * marked unschedulable are found all the same, and two waiting together get a victim each: the
   * second sees the first's victim terminating and the first's nomination holding its GPU.
   */
  @Test
  void podsKubeSchedulerFoundNoRoomForWithoutAskingTheExtenderGetBorrowedGpusBackOneVictimEach() {
    borrowingTwoOneGpuPods();

    var c0 = create(unschedulable(QuotaCluster.whole("quota-c", "c-0", 1)));
    var c1 = create(unschedulable(QuotaCluster.whole("quota-c", "c-1", 1)));

    await().atMost(WITHIN).until(() -> terminating("quota-b", "b-6") && terminating("quota-b", "b-5")
        && "whole-b".equals(nominated("quota-c", "c-0")) && "whole-b".equals(nominated("quota-c", "c-1")));
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> pod("quota-a", "a-0").getMetadata().getDeletionTimestamp() == null
        && java.util.stream.IntStream.rangeClosed(1, 4).allMatch(i -> pod("quota-b", "b-" + i).getMetadata().getDeletionTimestamp() == null));
    var victims = new java.util.TreeMap<String, String>();
    for (var waiting : List.of(c0, c1)) {
      for (var event : eventsOf(waiting)) {
        victims.put(waiting.getMetadata().getName(), event);
      }
    }
    assertThat(victims.values()).containsExactlyInAnyOrder(
        "QuotaReclaiming: quota team-c is under its min: evicted quota-b/b-6 (borrowing) to free GPUs on node whole-b; nominated to whole-b",
        "QuotaReclaiming: quota team-c is under its min: evicted quota-b/b-5 (borrowing) to free GPUs on node whole-b; nominated to whole-b");
    assertThat(eventsOf(pod("quota-b", "b-6"))).containsExactly("QuotaReclaimed: quota team-c took back its GPUs on node whole-b for pod quota-c/"
        + victims.entrySet().stream().filter(e -> e.getValue().contains("b-6")).findFirst().orElseThrow().getKey()
        + " (under its min; quota team-b was borrowing them)");
  }

  /**
   * team-c's urgent pod, under its min, waits on full nodes: reclaim takes team-b's borrowed GPU for
   * it (b-3, the one that keeps team-b at its min). kube-scheduler's own preemption, asked through
   * the preempt verb while b-3 terminates, would take c-low, team-c's own lower-priority pod, for
   * the same pod (b-3's higher priority than the pod's keeps kube-scheduler's own rule from
   * waiting for it): it is refused every node, so one pod evicts once.
   */
  @Test
  void kubeSchedulersPreemptionTakesNothingMoreForAPodReclaimIsMakingRoomFor() {
    borrowingByOne();
    var urgent = QuotaCluster.whole("quota-c", "c-urgent", 1);
    urgent.getSpec().setPriority(300);
    urgent = create(unschedulable(urgent));
    await().atMost(WITHIN).until(() -> terminating("quota-b", "b-3") && "whole-b".equals(nominated("quota-c", "c-urgent")));

    var answer = json(post(base, "/extender/preempt", preemptArgs(pod("quota-c", "c-urgent"), Map.of("whole-b", List.of("quota-c/c-low")))));
    assertThat(answer).isEqualTo(json("{\"NodeNameToMetaVictims\":{}}"));
    assertThat(eventsOf(urgent)).containsExactly(
        "QuotaReclaiming: quota team-c is under its min: evicted quota-b/b-3 (borrowing) to free GPUs on node whole-b; nominated to whole-b");
    assertThat(List.of(pod("quota-a", "a-0"), pod("quota-b", "b-1"), pod("quota-b", "b-2"), pod("quota-c", "c-low")))
        .allSatisfy(untouched -> assertThat(untouched.getMetadata().getDeletionTimestamp()).isNull());
  }

  /**
   * kube-scheduler's preemption nominated team-c's urgent pod to whole-b for c-low, its own team's
   * lower-priority pod, and has not deleted it yet: reclaim takes nothing for a pod nominated
   * already. Once kube-scheduler clears the nomination (its preemption came to nothing), reclaim
   * takes team-b's borrowed GPU.
   */
  @Test
  void aPodKubeSchedulersPreemptionNominatedGetsNoReclaimUntilTheNominationIsCleared() {
    borrowingByOne();
    var urgent = unschedulable(QuotaCluster.whole("quota-c", "c-urgent", 1));
    urgent.getSpec().setPriority(1000);
    urgent.getStatus().setNominatedNodeName("whole-b");
    urgent = create(urgent);

    await().during(coolDown.multipliedBy(2)).atMost(coolDown.multipliedBy(3)).until(() -> !terminating("quota-b", "b-3"));
    assertThat(eventsOf(urgent)).isEmpty();

    client.pods().inNamespace("quota-c").withName("c-urgent").subresource("status")
        .patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"status\":{\"nominatedNodeName\":null}}");
    await().atMost(WITHIN).until(() -> terminating("quota-b", "b-3") && "whole-b".equals(nominated("quota-c", "c-urgent")));
    assertThat(List.of(pod("quota-a", "a-0"), pod("quota-b", "b-1"), pod("quota-b", "b-2"), pod("quota-c", "c-low")))
        .allSatisfy(untouched -> assertThat(untouched.getMetadata().getDeletionTimestamp()).isNull());
  }

  /**
   * kube-scheduler never calls the extender's filter for the pod (every node full by its count): a
   * victim stuck terminating long past the room's hold (two cool-downs) keeps it held all the same,
   * the sweep looking at the pod reclaim nominated again, and nobody else is evicted.
   */
  @Test
  void theRoomStaysHeldWhileTheVictimTerminatesLongerThanTheHoldWhenKubeSchedulerNeverAsksTheExtender() throws InterruptedException {
    borrowingTwoOneGpuPods();
    // Only the quota nodes: the fixture cluster's other GPU nodes would take it.
    var waiting = unschedulable(QuotaCluster.whole("quota-c", "c-0", 1));
    waiting.getSpec().setNodeSelector(Map.of("aliyun.accelerator/nvidia_mem", "16384MiB"));
    create(waiting);
    await().atMost(WITHIN).until(() -> terminating("quota-b", "b-6") && "whole-b".equals(nominated("quota-c", "c-0")));

    Thread.sleep(coolDown.multipliedBy(3).toMillis());
    assertThat(inspected("team-c").path("used").path("nvidia.com/gpu").asText()).isEqualTo("1");
    assertThat(java.util.stream.IntStream.rangeClosed(1, 5).filter(i -> terminating("quota-b", "b-" + i)).boxed().toList()).isEmpty();
    assertThat(pod("quota-a", "a-0").getMetadata().getDeletionTimestamp()).isNull();
  }

  /** Eight GPUs taken: team-a at its min; team-b six one-GPU pods, two above its min of 4, b-5 and b-6 the youngest. */
  private void borrowingTwoOneGpuPods() {
    running(kept(QuotaCluster.whole("quota-a", "a-0", 2)), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    var placed = List.of("whole-a:2", "whole-a:3", "whole-b:0", "whole-b:1", "whole-b:2", "whole-b:3");
    for (var i = 1; i <= 6; i++) {
      var at = placed.get(i - 1).split(":");
      running(kept(QuotaCluster.whole("quota-b", "b-" + i, 1)), at[0], at[1], 100, "2026-11-22T10:0" + i + ":00Z");
    }
  }

  /** Eight GPUs taken: team-a at its min, team-b one above its min of 4 (b-3, 1 GPU), team-c's c-low of the lowest priority. */
  private void borrowingByOne() {
    running(kept(QuotaCluster.whole("quota-a", "a-0", 2)), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-1", 2)), "whole-a", "2,3", 100, "2026-11-22T10:01:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-2", 2)), "whole-b", "0,1", 100, "2026-11-22T10:02:00Z");
    running(kept(QuotaCluster.whole("quota-b", "b-3", 1)), "whole-b", "2", 500, "2026-11-22T10:03:00Z");
    running(kept(QuotaCluster.whole("quota-c", "c-low", 1)), "whole-b", "3", 0, "2026-11-22T10:04:00Z");
  }

  /**
   * kube-scheduler gave up on a pod before its room came, by a change it does not take as a reason
   * to try it again (here: none at all): the pod the extender would place now is requeued, then
   * again only after a longer wait; one its team's max shuts out is not.
   */
  @Test
  void aWaitingPodTheExtenderWouldPlaceNowIsRequeuedAndAgainOnlyAfterALongerWait() {
    running(QuotaCluster.whole("quota-a", "a-0", 2), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(QuotaCluster.whole("quota-a", "a-1", 2), "whole-a", "2,3", 0, "2026-11-22T10:01:00Z");
    running(QuotaCluster.whole("quota-a", "a-2", 2), "whole-b", "0,1", 0, "2026-11-22T10:02:00Z");
    create(unschedulable(QuotaCluster.whole("quota-a", "a-over", 2)));
    create(unschedulable(QuotaCluster.whole("quota-b", "b-late", 2)));

    await().atMost(WITHIN).until(() -> requeued("quota-b", "b-late") != null);
    var first = java.time.Instant.parse(requeued("quota-b", "b-late"));
    await().atMost(WITHIN).until(() -> !first.equals(java.time.Instant.parse(requeued("quota-b", "b-late"))));
    var second = java.time.Instant.parse(requeued("quota-b", "b-late"));
    await().atMost(WITHIN).until(() -> !second.equals(java.time.Instant.parse(requeued("quota-b", "b-late"))));
    var third = java.time.Instant.parse(requeued("quota-b", "b-late"));
    assertThat(Duration.between(second, third)).isGreaterThan(Duration.between(first, second)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
    assertThat(requeued("quota-a", "a-over")).isNull();
  }

  /**
   * A tree change kube-scheduler cannot see: the pods it found unschedulable in the tree's
   * namespaces are requeued at once (an update of each), so that filter answers with the new tree
   * now; filter then lets in what a raised max admits and refuses, with the quota's reason, what a
   * lowered one shuts out. A pod of a namespace no tree names is left alone.
   */
  @Test
  void aTreeChangeRequeuesTheUnschedulablePodsOfItsNamespacesAndFilterAnswersWithTheNewTree() {
    running(QuotaCluster.whole("quota-a", "a-0", 2), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(QuotaCluster.whole("quota-a", "a-1", 2), "whole-a", "2,3", 0, "2026-11-22T10:01:00Z");
    running(QuotaCluster.whole("quota-a", "a-2", 2), "whole-b", "0,1", 0, "2026-11-22T10:02:00Z");
    var waiting = create(unschedulable(QuotaCluster.whole("quota-a", "a-3", 2)));
    var elsewhere = create(unschedulable(QuotaCluster.whole("default", "no-team", 2)));
    assertThat(filter(waiting).path("FailedAndUnresolvableNodes").path("whole-b").asText())
        .isEqualTo("quota team-a: nvidia.com/gpu used 6 + asked 2 > max 6");

    QuotaCluster.apply(client, treeWithMax("team-a", 8));
    await().atMost(WITHIN).until(() -> requeued("quota-a", "a-3") != null);
    assertThat(filter(pod("quota-a", "a-3")).path("NodeNames").toString()).isEqualTo("[\"whole-b\"]");
    var first = requeued("quota-a", "a-3");

    QuotaCluster.apply(client, treeWithMax("team-a", 4));
    await().atMost(WITHIN).until(() -> !first.equals(requeued("quota-a", "a-3")));
    assertThat(filter(pod("quota-a", "a-3")).path("FailedAndUnresolvableNodes").path("whole-b").asText())
        .isEqualTo("quota team-a: nvidia.com/gpu used 6 + asked 2 > max 4");
    assertThat(requeued("default", "no-team")).isNull();
    client.resource(elsewhere).delete();
  }

  @Test
  void aGangOverItsTeamsMaxWaitsWhole() {
    var members = new ArrayList<Pod>();
    for (var i = 0; i < 3; i++) {
      var member = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/gang-member.yaml")), Pod.class);
      member.getMetadata().setName("trainer-worker-" + i);
      members.add(create(member));
    }
    var reason = "gang \"quota-c/trainer\": needs 3 × 2 GPUs, and its team quota does not admit them all:"
        + " quota team-c: nvidia.com/gpu used 0 + asked 6 > max 4";
    await().atMost(WITHIN).untilAsserted(() ->
        assertThat(filter(members.get(0)).path("FailedAndUnresolvableNodes").path("whole-a").asText()).isEqualTo(reason));
    for (var member : members) {
      assertThat(filter(member).path("NodeNames").toString()).isEqualTo("[]");
    }
    assertThat(QuotaCluster.NODES.stream().allMatch(n -> ledger.claimsOn(n).isEmpty())).isTrue();
  }

  @Test
  void gpuMemorySharesAndWholeGpusCountInOneTree() {
    running(QuotaCluster.whole("quota-a", "a-0", 2), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    var share = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/pod-share.yaml")), Pod.class);
    share.getSpec().setNodeName("share-q");
    share.getSpec().getContainers().get(0).getResources().getLimits().put("aliyun.com/gpu-mem", new io.fabric8.kubernetes.api.model.Quantity("12"));
    share.getMetadata().setAnnotations(Map.of("ALIYUN_COM_GPU_MEM_IDX", "0", "ALIYUN_COM_GPU_MEM_POD", "12"));
    share.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Running").withStartTime("2026-11-22T10:00:00Z").build());
    client.resource(share).create();
    await().atMost(WITHIN).until(() -> ledger.claimsOn("share-q").size() == 1 && ledger.claimsOn("whole-a").size() == 1);

    var teamA = inspected("team-a");
    assertThat(teamA.path("used")).isEqualTo(json("{\"aliyun.com/gpu-mem\":\"12\",\"nvidia.com/gpu\":\"2\"}"));
    assertThat(teamA.path("borrowed")).isEqualTo(json("{\"aliyun.com/gpu-mem\":\"0\",\"nvidia.com/gpu\":\"0\"}"));
    assertThat(teamA.path("min")).isEqualTo(json("{\"aliyun.com/gpu-mem\":\"16\",\"nvidia.com/gpu\":\"2\"}"));
    assertThat(teamA.path("max")).isEqualTo(json("{\"aliyun.com/gpu-mem\":\"24\",\"nvidia.com/gpu\":\"6\"}"));
    assertThat(teamA.path("namespaces").toString()).isEqualTo("[\"quota-a\"]");
    assertThat(inspected("root").path("used")).isEqualTo(json("{\"aliyun.com/gpu-mem\":\"12\",\"nvidia.com/gpu\":\"2\"}"));

    var sixteen = sharePod("quota-a", "infer-16");
    var refused = filter(sixteen);
    assertThat(refused.path("FailedAndUnresolvableNodes").path("share-q").asText())
        .isEqualTo("quota team-a: aliyun.com/gpu-mem used 12 + asked 16 > max 24");
    assertThat(filter(sharePod("quota-c", "infer-16")).path("NodeNames").toString()).isEqualTo("[\"share-q\"]");
    assertThat(metrics()).contains("gpu_admission_quota_used{quota=\"team-a\",resource=\"aliyun.com/gpu-mem\"} 12.0")
        .contains("gpu_admission_quota_used{quota=\"team-a\",resource=\"nvidia.com/gpu\"} 2.0")
        .contains("gpu_admission_quota_max{quota=\"team-a\",resource=\"nvidia.com/gpu\"} 6.0");
  }

  @Test
  void quotasOffByPolicyLeaveEveryPodToTheNodes() throws Exception {
    running(QuotaCluster.whole("quota-a", "a-0", 2), "whole-a", "0,1", 0, "2026-11-22T10:00:00Z");
    running(QuotaCluster.whole("quota-a", "a-1", 2), "whole-a", "2,3", 0, "2026-11-22T10:01:00Z");
    var pending = create(QuotaCluster.whole("quota-a", "train-a", 4));
    assertThat(filter(pending).path("NodeNames").toString()).isEqualTo("[]");

    policies.replace(PolicyParser.parse("quotas:\n  enabled: false\n"), PolicySource.CONFIGMAP);

    assertThat(filter(pending).path("NodeNames").toString()).isEqualTo("[\"whole-b\"]");
    assertThat(inspection().path("quotas").path("enabled").asBoolean()).isFalse();
  }

  /** {@code pod} as kube-scheduler leaves one it found no room for: condition PodScheduled False, reason Unschedulable. */
  private static Pod unschedulable(Pod pod) {
    pod.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Pending").addNewCondition().withType("PodScheduled")
        .withStatus("False").withReason("Unschedulable").withLastTransitionTime("2026-11-22T11:00:00Z")
        .withMessage("0/3 nodes are available: 1 Insufficient aliyun.com/gpu-mem, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are"
            + " available: 3 No preemption victims found for incoming pod.")
        .endCondition().build());
    return pod;
  }

  /** The tree of quota/tree.yaml with {@code quota}'s max of whole GPUs set to {@code gpus}. */
  private static io.fabric8.kubernetes.api.model.GenericKubernetesResource treeWithMax(String quota, int gpus) {
    var tree = QuotaCluster.tree("quota/tree.yaml");
    @SuppressWarnings("unchecked")
    var root = (Map<String, Object>) ((Map<String, Object>) tree.getAdditionalProperties().get("spec")).get("root");
    @SuppressWarnings("unchecked")
    var children = (List<Map<String, Object>>) root.get("children");
    @SuppressWarnings("unchecked")
    var max = (Map<String, Object>) children.stream().filter(c -> quota.equals(c.get("name"))).findFirst().orElseThrow().get("max");
    max.put("nvidia.com/gpu", gpus);
    return tree;
  }

  private String requeued(String namespace, String name) {
    var annotations = pod(namespace, name).getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(io.gpuadmission.preemption.PodRequeue.REQUEUED);
  }

  private boolean terminating(String namespace, String name) {
    return pod(namespace, name).getMetadata().getDeletionTimestamp() != null;
  }

  private String nominated(String namespace, String name) {
    var status = pod(namespace, name).getStatus();
    return status == null ? null : status.getNominatedNodeName();
  }

  private static Pod kept(Pod pod) {
    pod.getMetadata().setFinalizers(List.of("gpu-admission.io/test-kubelet"));
    return pod;
  }

  private void running(Pod pod, String node, String indices, int priority, String started) {
    var created = client.resource(QuotaCluster.bound(pod, node, indices, priority, started)).create();
    await().atMost(WITHIN).until(() -> ledger.claim(created.getMetadata().getUid()).isPresent());
  }

  /** Bound by the default scheduler, running, without the annotations of gpu-admission or its node agent. */
  private void boundElsewhere(Pod pod, String node) {
    pod.getSpec().setSchedulerName("default-scheduler");
    pod.getSpec().setNodeName(node);
    pod.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Running").withStartTime("2026-11-22T10:00:00Z").build());
    create(pod);
  }

  private Pod create(Pod pod) {
    return client.resource(pod).create();
  }

  private Pod sharePod(String namespace, String name) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/pod-share.yaml")), Pod.class);
    pod.getMetadata().setNamespace(namespace);
    pod.getMetadata().setName(name);
    pod.getSpec().getContainers().get(0).getResources().getLimits().put("aliyun.com/gpu-mem", new io.fabric8.kubernetes.api.model.Quantity("16"));
    return create(pod);
  }

  private JsonNode filter(Pod pod) {
    return json(post(base, "/extender/filter", args(pod, QuotaCluster.NODES)));
  }

  private JsonNode inspection() {
    return json(SchedulerCalls.get(base, "/extender/inspect"));
  }

  private JsonNode inspected(String quota) {
    for (var node : inspection().path("quotas").path("quotas")) {
      if (node.path("name").asText().equals(quota)) {
        return node;
      }
    }
    throw new AssertionError("no quota " + quota + " in " + inspection().path("quotas"));
  }

  private String metrics() {
    return io.restassured.RestAssured.given().relaxedHTTPSValidation().baseUri(base.toString()).get("/q/metrics").then().extract().asString();
  }

  /** A counter's value in /q/metrics (a line {@code name value}). */
  private double counter(String name) {
    return metrics().lines().filter(line -> line.startsWith(name + " ")).mapToDouble(line -> Double.parseDouble(line.substring(name.length() + 1)))
        .findFirst().orElseThrow(() -> new AssertionError("no " + name + " in /q/metrics"));
  }

  private Pod pod(String namespace, String name) {
    return client.pods().inNamespace(namespace).withName(name).get();
  }

  private void letGo(String namespace, String name) {
    client.pods().inNamespace(namespace).withName(name).edit(p -> {
      p.getMetadata().setFinalizers(new ArrayList<>());
      return p;
    });
  }

  /** The Events about this very pod (by UID: the mock API server keeps those of earlier tests' pods of the same name). */
  private List<String> eventsOf(Pod pod) {
    return client.v1().events().inNamespace(pod.getMetadata().getNamespace()).list().getItems().stream()
        .filter(e -> pod.getMetadata().getUid().equals(e.getInvolvedObject().getUid()))
        .map(e -> e.getReason() + ": " + e.getMessage())
        .toList();
  }

  private static PodCondition disruptionTarget(Pod pod) {
    return pod.getStatus().getConditions().stream().filter(c -> PodFacts.DISRUPTION_TARGET.equals(c.getType())).findFirst().orElseThrow();
  }

  private List<String> events(String namespace, String pod) {
    return client.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> pod.equals(e.getInvolvedObject().getName()))
        .map(e -> e.getReason() + ": " + e.getMessage())
        .toList();
  }
}
