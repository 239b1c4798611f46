package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.cluster.LedgerWatcher;
import io.gpuadmission.cluster.PlacementLeadership;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyParser;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A replica keeps campaigning for the placement Lease for as long as it runs, whatever ended its
 * last term: renewals that could not reach the API server before the renew deadline, the Lease
 * taken by a holder that then vanished, a Lease written by hand without its times. Each replica
 * has its own client, whose requests the mock API server can leave unanswered (a replica cut off,
 * or an API server stopped with SIGSTOP, as the issue reproduced it).
 */
class LeaseLossTest {
  private static final String NS = "gpu-admission";
  private static final String APPS = "ml-team-a";
  private static final String LEASE = "gpu-admission-placement";
  private static final PlacementLeadership.Timing FAST =
      new PlacementLeadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofMillis(200));

  private final GpuPolicy policy = PolicyParser.builtInDefault();
  private final List<Replica> replicas = new CopyOnWriteArrayList<>();
  private BindingApiServer.Started api;
  private KubernetesClient admin;

  /** One replica, wired as PlacementWiring does; every request it sends carries its name. */
  private final class Replica implements AutoCloseable {
    final KubernetesClient client;
    final GpuLedger ledger = new GpuLedger();
    final LeaderGate gate;
    final PodBinder binder;
    final LedgerWatcher watcher;
    final PlacementLeadership leadership;

    Replica(String identity) {
      client = api.client(identity);
      gate = new LeaderGate(identity);
      binder = new PodBinder(client, ledger, new PlacementDecider(ledger, () -> policy), gate, () -> policy, Clock.systemUTC(), Duration.ofMinutes(5));
      watcher = new LedgerWatcher(client, ledger, () -> policy).start();
      leadership = new PlacementLeadership(client, ledger, gate, () -> policy).start(NS, LEASE, FAST);
      replicas.add(this);
    }

    /** A bind as kube-scheduler sends it: "" when bound, else the error. */
    String bind(String pod) {
      var uid = admin.pods().inNamespace(APPS).withName(pod).get().getMetadata().getUid();
      return binder.bind(new BindRequest(APPS, pod, uid, "gpu-0"));
    }

    boolean bindsAgain() {
      return gate.leading() && ledger.nodes().contains("gpu-0");
    }

    @Override
    public void close() {
      leadership.close();
      watcher.close();
      client.close();
    }
  }

  @BeforeEach
  void cluster() {
    api = BindingApiServer.start();
    admin = api.server().createClient();
    admin.resource(new NodeBuilder().withNewMetadata().withName("gpu-0")
        .addToLabels("aliyun.accelerator/nvidia_count", "2")
        .addToLabels("aliyun.accelerator/nvidia_mem", "16130MiB")
        .addToLabels("aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB")
        .endMetadata().build()).create();
    for (int p = 0; p < 3; p++) {
      admin.resource(PlacementFixtures.sharePod("share-" + p, APPS, 4)).create();
    }
  }

  @AfterEach
  void stop() {
    api.bindings().resume();
    replicas.forEach(Replica::close);
    admin.close();
    api.server().destroy();
  }

  @Test
  void aLeaderCutOffPastTheRenewDeadlineStopsBindingAndLeadsAgainWhenItIsBack() {
    var a = new Replica("replica-a");
    await().atMost(Duration.ofSeconds(20)).until(a::bindsAgain);
    assertThat(a.bind("share-0")).isEmpty();

    api.bindings().pause(BindingApiServer.from("replica-a"));
    // Its Lease can expire at the last renewal plus the lease duration: it must stop binding before.
    await().atMost(FAST.renewDeadline().plusSeconds(1)).until(() -> !a.gate.leading());
    assertThat(a.bind("share-1"))
        .doesNotContain("(leader: replica-a)")
        .matches("gpu-admission replica replica-a could not renew the placement Lease .*; retry"
            + "|no gpu-admission replica holds the placement Lease now.*; retry");

    api.bindings().resume();
    await().atMost(Duration.ofSeconds(10)).until(a::bindsAgain);
    assertThat(a.bind("share-1")).isEmpty();
    assertThat(admin.pods().inNamespace(APPS).withName("share-1").get().getSpec().getNodeName()).isEqualTo("gpu-0");
  }

  @Test
  void aReplicaCutOffUntilTheOtherLeadsTakesOverWithinALeaseWhenTheOtherDies() {
    var a = new Replica("replica-a");
    await().atMost(Duration.ofSeconds(20)).until(a::bindsAgain);
    var b = new Replica("replica-b");
    await().atMost(Duration.ofSeconds(20)).until(() -> b.ledger.nodes().contains("gpu-0"));

    api.bindings().pause(BindingApiServer.from("replica-a"));
    await().atMost(FAST.leaseDuration().plusSeconds(6)).until(b::bindsAgain);
    api.bindings().resume();
    assertThat(b.bind("share-0")).isEmpty();
    await().atMost(Duration.ofSeconds(10)).until(() -> "replica-b".equals(a.gate.leader()));

    // B dies without releasing the Lease (its node lost power): A waits out B's lease, then leads.
    var died = System.nanoTime();
    api.bindings().pause(BindingApiServer.from("replica-b"));
    await().atMost(FAST.leaseDuration().plusSeconds(2)).until(a::bindsAgain);
    System.out.printf("replica-a led %d ms after replica-b was cut off (lease %s)%n", (System.nanoTime() - died) / 1_000_000, FAST.leaseDuration());
    assertThat(b.gate.leading()).isFalse();
    assertThat(a.bind("share-1")).isEmpty();
    assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("replica-a");
  }

  @Test
  void aLeaseTakenByAHolderThatVanishesIsTakenBackOnceItExpires() {
    var a = new Replica("replica-a");
    await().atMost(Duration.ofSeconds(20)).until(a::bindsAgain);

    // Another holder renews once and is gone (a replica of an older install, a hand edit). Not
    // conditional on a resourceVersion: replica-a renews every 200 ms.
    var now = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").format(ZonedDateTime.now(ZoneOffset.UTC));
    admin.leases().inNamespace(NS).withName(LEASE).patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"spec\":{\"holderIdentity\":\"gpu-admission-gone\",\"renewTime\":\"" + now + "\"}}");
    await().atMost(FAST.renewDeadline()).until(() -> !a.gate.leading());
    await().atMost(FAST.leaseDuration().plusSeconds(2)).until(a::bindsAgain);
    assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("replica-a");
    assertThat(a.bind("share-0")).isEmpty();
  }

  @Test
  void aLeaseWrittenWithoutDurationOrTimesIsTakenOver() {
    // kubectl create of a bare Lease, or another tool's: client-go reads the missing fields as zero.
    admin.resource(new LeaseBuilder().withNewMetadata().withName(LEASE).withNamespace(NS).endMetadata()
        .withNewSpec().withHolderIdentity("gpu-admission-old").endSpec().build()).create();

    var a = new Replica("replica-a");
    await().atMost(FAST.leaseDuration().plusSeconds(2)).until(a::bindsAgain);
    assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("replica-a");
  }

  @Test
  void aLeaseWithoutSpecIsTakenOver() {
    admin.resource(new LeaseBuilder().withNewMetadata().withName(LEASE).withNamespace(NS).endMetadata().build()).create();

    var a = new Replica("replica-a");
    await().atMost(FAST.leaseDuration().plusSeconds(2)).until(a::bindsAgain);
    assertThat(lease().getSpec().getHolderIdentity()).isEqualTo("replica-a");
  }

  private Lease lease() {
    return admin.leases().inNamespace(NS).withName(LEASE).get();
  }
}
