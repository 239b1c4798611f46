package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.cluster.LeaderPodLabel;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.cluster.PlacementLeadership;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two replicas and the leader-only Service of the manifests, on one mock API server: the Service's
 * selector, applied to the pods as kube-proxy would, always picks exactly the Lease holder, so a
 * bind sent through it succeeds on its first attempt, before and after a leader change, and a label
 * left on a pod that no longer leads is taken off.
 */
class LeaderServiceBindTest {
  private static final String NS = "gpu-admission";
  private static final String APPS = "ml-team-a";
  private static final PlacementLeadership.Timing FAST =
      new PlacementLeadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofMillis(200));

  private final GpuPolicy policy = PolicyParser.builtInDefault();
  private final List<Replica> replicas = new CopyOnWriteArrayList<>();
  private BindingApiServer.Started api;
  private KubernetesClient admin;
  private Map<String, String> selector;

  /** One replica, wired as PlacementWiring does: election, binder, and the label on its own pod. */
  private final class Replica implements AutoCloseable {
    final KubernetesClient client = api.server().createClient();
    final GpuLedger ledger = new GpuLedger();
    final LeaderGate gate;
    final PodBinder binder;
    final LedgerWatcher watcher;
    final LeaderPodLabel label;
    final PlacementLeadership leadership;

    Replica(String pod) {
      gate = new LeaderGate(pod);
      binder = new PodBinder(client, ledger, new PlacementDecider(ledger, () -> policy), gate, () -> policy, Clock.systemUTC(), Duration.ofMinutes(5));
      watcher = new LedgerWatcher(client, ledger, () -> policy).start();
      label = new LeaderPodLabel(client, NS, gate, Duration.ofMillis(200)).start();
      leadership = new PlacementLeadership(client, ledger, gate, () -> policy).start(NS, "gpu-admission-placement", FAST);
    }

    @Override
    public void close() {
      leadership.close();
      label.close();
      watcher.close();
      client.close();
    }
  }

  @BeforeEach
  void cluster() throws Exception {
    api = BindingApiServer.start();
    admin = api.server().createClient();
    var service = admin.getKubernetesSerialization().unmarshal(Files.readString(Path.of("manifests/components/scheduler/leader-service.yaml")), Service.class);
    selector = service.getSpec().getSelector();
    admin.resource(new NodeBuilder().withNewMetadata().withName("gpu-0")
        .addToLabels("aliyun.accelerator/nvidia_count", "2")
        .addToLabels("aliyun.accelerator/nvidia_mem", "16130MiB")
        .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB")
        .endMetadata().build()).create();
    for (var name : List.of("gpu-admission-a", "gpu-admission-b", "gpu-admission-gone")) {
      admin.resource(new PodBuilder().withNewMetadata().withName(name).withNamespace(NS)
          .addToLabels("app.kubernetes.io/name", "gpu-admission").endMetadata()
          .withNewSpec().addNewContainer().withName("gpu-admission").withImage("gpu-admission").endContainer().endSpec().build()).create();
    }
    for (int p = 0; p < 3; p++) {
      admin.resource(PlacementFixtures.sharePod("share-" + p, APPS, 4)).create();
    }
  }

  @AfterEach
  void stop() {
    replicas.forEach(Replica::close);
    admin.close();
    api.server().destroy();
  }

  @Test
  void bindThroughTheLeaderServiceSucceedsFirstTimeAcrossALeaderChange() {
    // A former leader that died without taking its label off: the new leader takes it off.
    label("gpu-admission-gone", "true");
    replicas.add(new Replica("gpu-admission-a"));
    replicas.add(new Replica("gpu-admission-b"));
    var first = awaitServiceSelectsOnlyTheLeader();
    assertThat(labelOf("gpu-admission-gone")).isNull();

    assertThat(bindThroughService("share-0")).isEmpty();
    assertThat(admin.pods().inNamespace(APPS).withName("share-0").get().getSpec().getNodeName()).isEqualTo("gpu-0");

    first.close();
    replicas.remove(first);
    var second = awaitServiceSelectsOnlyTheLeader();
    assertThat(second.gate.identity()).isNotEqualTo(first.gate.identity());
    assertThat(labelOf(first.gate.identity())).isNull();
    assertThat(bindThroughService("share-1")).isEmpty();

    // The old leader's container restarts in the same pod, its label still on (it was killed before
    // taking it off): starting as a follower, it takes its own label off.
    label(first.gate.identity(), "true");
    replicas.add(new Replica(first.gate.identity()));
    await().atMost(Duration.ofSeconds(10)).until(() -> labelOf(first.gate.identity()) == null);
    assertThat(awaitServiceSelectsOnlyTheLeader()).isSameAs(second);
    assertThat(bindThroughService("share-2")).isEmpty();
    assertThat(api.bindings().created()).isEqualTo(3);
  }

  /** What kube-proxy does with the Service: the pods its selector matches, as replicas. */
  private List<Replica> selectedByService() {
    var names = admin.pods().inNamespace(NS).withLabels(selector).list().getItems().stream().map(p -> p.getMetadata().getName()).toList();
    return replicas.stream().filter(r -> names.contains(r.gate.identity())).toList();
  }

  private Replica awaitServiceSelectsOnlyTheLeader() {
    await().atMost(Duration.ofSeconds(20)).until(() -> {
      var selected = selectedByService();
      var pods = admin.pods().inNamespace(NS).withLabels(selector).list().getItems();
      return pods.size() == 1 && selected.size() == 1 && selected.get(0).gate.leading() && selected.get(0).ledger.nodes().contains("gpu-0");
    });
    return selectedByService().get(0);
  }

  /** One bind, sent once, to the replica the Service routes to: "" when it bound. */
  private String bindThroughService(String pod) {
    var uid = admin.pods().inNamespace(APPS).withName(pod).get().getMetadata().getUid();
    return selectedByService().get(0).binder.bind(new BindRequest(APPS, pod, uid, "gpu-0"));
  }

  private String labelOf(String pod) {
    return admin.pods().inNamespace(NS).withName(pod).get().getMetadata().getLabels().get(LeaderPodLabel.LABEL);
  }

  private void label(String pod, String value) {
    admin.pods().inNamespace(NS).withName(pod).patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"labels\":{\"" + LeaderPodLabel.LABEL + "\":\"" + value + "\"}}}");
  }
}
