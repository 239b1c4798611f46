package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.policy.PolicyStore.PolicySource;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTree;
import io.gpuadmission.quota.QuotaTreeCheck;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.teamquota.QuotaLedgerBook;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The GPU ledger's pods as {@link LedgerWatcher} wires them (its store, its handler, the pod facts
 * index told after the ledger) when the policy names another whole-GPU resource: team A's pods,
 * asking {@code nvidia.com/gpu}, are GPU pods no more.
 */
class LedgerFeedTest {
  private static final QuotaTree TREE = ((QuotaTreeCheck.Valid) QuotaTreeReading.check(Fixtures.yamlTree(Fixtures.path("quota/tree.yaml")))).tree();

  private final PolicyStore policies = new PolicyStore();
  private final GpuLedger ledger = new GpuLedger();
  private final PodFactsIndex index = new PodFactsIndex(policies::current, ledger);
  private final LedgerFeed feed = new LedgerFeed(ledger, policies::current).alsoTell(index::current, index::gone);
  private final KeepOnlyStore<Pod> store = new KeepOnlyStore<>(feed::keeps, feed::strip);
  private final ResourceEventHandler<Pod> handler = Informers.handler(feed::pod, feed::podGone);
  private final QuotaLedgerBook books = new QuotaLedgerBook(ledger, policies::current, index);
  private List<Pod> teamA;

  @BeforeEach
  void teamAsPods() {
    Fixtures.nodes(Fixtures.path("quota/nodes.yaml")).forEach(feed::node);
    teamA = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/pods-default-scheduler.yaml")), KubernetesList.class)
        .getItems().stream().map(Pod.class::cast).toList();
    teamA.forEach(this::informed);
    assertThat(ledger.claim("placed-0-uid").orElseThrow().gpus()).containsExactly(0, 1);
    assertThat(used()).isEqualTo(QuotaResources.of("nvidia.com/gpu", 4));
  }

  @Test
  void aPodThatFinishesOnceThePolicyNamesAnotherResourceIsForgotten() throws Exception {
    policies.replace(renamed(), PolicySource.CONFIGMAP);
    var done = KubernetesJson.mapper().convertValue(teamA.get(1), Pod.class);
    done.getMetadata().setResourceVersion("2");
    done.getStatus().setPhase("Succeeded");

    informed(done);

    assertThat(store.get("quota-a/placed-0")).isNull();
    assertThat(ledger.claim("placed-0-uid")).isEmpty();
    assertThat(index.facts("placed-0-uid")).isEmpty();
    assertThat(books.pods(TREE).keySet()).containsExactly("elsewhere-0-uid");
  }

  @Test
  void aPolicyNamingAnotherResourceForgetsThePodsThatAreGpuPodsNoMore() throws Exception {
    // As PlacementWiring reads the pods again when the policy changes what a GPU pod is.
    policies.onChangeOf(GpuAsk::policyParts, policy -> {
      feed.forgetUnkept(store);
      index.replaceAll(() -> store.values().toList());
    });

    policies.replace(renamed(), PolicySource.CONFIGMAP);

    assertThat(store.size()).isZero();
    assertThat(ledger.claims()).isEmpty();
    assertThat(index.facts("placed-0-uid")).isEmpty();
    assertThat(index.facts("elsewhere-0-uid")).isEmpty();
    assertThat(index.facts("waiting-0-uid")).isEmpty();
    assertThat(books.pods(TREE)).isEmpty();
    assertThat(used()).isEqualTo(QuotaResources.NONE);
  }

  @Test
  void aPolicyChangeOfNothingAPodAsksReadsNoPodAgain() throws Exception {
    var generation = index.generation();
    policies.onChangeOf(GpuAsk::policyParts, policy -> index.replaceAll(() -> store.values().toList()));

    policies.replace(PolicyParser.parse(PolicyParser.builtInDefaultText().replace("enabled: true", "enabled: false")), PolicySource.CONFIGMAP);

    assertThat(index.generation()).isEqualTo(generation);
  }

  private static io.gpuadmission.policy.GpuPolicy renamed() throws Exception {
    return PolicyParser.parse(PolicyParser.builtInDefaultText().replace("wholeGpuResource: nvidia.com/gpu", "wholeGpuResource: example.com/gpu"));
  }

  private QuotaResources used() {
    return books.book(TREE).used(TREE.leafOf("quota-a").orElseThrow());
  }

  /**
   * As fabric8's informer tells a pod from the watch: stored first, then the pod as read to the
   * handlers, as an add, or as an update from what the store held when the resource version moved.
   */
  private void informed(Pod pod) {
    var key = store.getKey(pod);
    var before = store.put(key, pod);
    if (before == null) {
      handler.onAdd(pod);
    } else if (!Objects.equals(before.getMetadata().getResourceVersion(), pod.getMetadata().getResourceVersion())) {
      handler.onUpdate(before, pod);
    }
  }
}
