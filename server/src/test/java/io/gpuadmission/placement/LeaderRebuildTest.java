package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.testing.MockApiServer;
import io.gpuadmission.cluster.PlacementLeadership;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A new leader rebuilds its ledger from a pod list, while its informer goes on telling it of pods.
 * A list read before a pod was bound (or deleted) and applied after the informer told of it must
 * not undo what the informer said: the informer never tells it again, and the ledger would give the
 * bound pod's GPUs away, or hold a deleted pod's GPUs, for as long as the pod stays as it is.
 */
class LeaderRebuildTest {
  private static final PlacementLeadership.Timing FAST =
      new PlacementLeadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofMillis(200));
  private static final String CGPU_B = "cn-beijing.i-cgpu-v100-b";
  /** Long enough for the informer to tell of the pods below on a busy machine, before the list arrives. */
  private static final Duration LIST_DELAY = Duration.ofSeconds(6);

  @Test
  void podsBoundOrDeletedWhileTheNewLeaderReadsItsListStayAsTheInformerToldThem() throws Exception {
    var pods = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/bound-pods.yaml")), KubernetesList.class)
        .getItems().stream().map(Pod.class::cast).toList();
    try (var api = MockApiServer.start(3, null);
        var informerClient = api.informerClient();
        var leaderClient = api.admin();
        var admin = api.admin()) {
      var ledger = new GpuLedger();
      var watcher = new LedgerWatcher(informerClient, ledger, PolicyParser::builtInDefault).start();
      var gone = admin.resource(pods.get(0)).create();
      await().atMost(Duration.ofSeconds(20)).until(() -> watcher.synced() && ledger.claimsOn(CGPU_B).size() == 1);

      // The new leader's list of the pods is read now, and reaches it LIST_DELAY later.
      var listRead = api.answerLate(
          request -> "GET".equals(request.getMethod()) && request.getPath().startsWith("/api/v1/pods") && !request.getPath().contains("watch=true"),
          LIST_DELAY);
      var gate = new LeaderGate("replica-a");
      try (var leadership = new PlacementLeadership(leaderClient, ledger, gate, PolicyParser::builtInDefault)
          .start("gpu-admission", "gpu-admission-placement", FAST)) {
        listRead.get(20, java.util.concurrent.TimeUnit.SECONDS);
        admin.resource(gone).delete();
        var bound = pods.subList(1, 4).stream().map(pod -> admin.resource(pod).create().getMetadata().getUid()).toList();
        await().atMost(LIST_DELAY).until(() -> uidsOn(ledger).equals(sorted(bound)));
        assertThat(gate.leading()).as("the leader is still waiting for its list").isFalse();

        await().atMost(Duration.ofSeconds(20)).until(gate::leading);

        assertThat(uidsOn(ledger)).isEqualTo(sorted(bound));
        assertThat(ledger.claim(gone.getMetadata().getUid())).isEmpty();
      } finally {
        watcher.close();
      }
    }
  }

  private static List<String> uidsOn(GpuLedger ledger) {
    return ledger.claimsOn(CGPU_B).stream().map(GpuClaim::podUid).sorted().toList();
  }

  private static List<String> sorted(List<String> uids) {
    return uids.stream().sorted().toList();
  }
}
