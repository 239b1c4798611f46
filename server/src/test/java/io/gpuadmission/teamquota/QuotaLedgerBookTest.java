package io.gpuadmission.teamquota;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.LedgerFeed;
import io.gpuadmission.cluster.QuotaTreeReading;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.quota.QuotaPod;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTree;
import io.gpuadmission.quota.QuotaTreeCheck;
import io.gpuadmission.support.Fixtures;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Team usage from the ledger and the pod informer, fed as the service feeds them (stripped pods,
 * ledger first): a whole-GPU pod bound by another scheduler without annotations counts by what it
 * asks, a pod the ledger holds GPUs for counts once by its claim, a pending pod counts nothing.
 */
class QuotaLedgerBookTest {
  private static final QuotaTree TREE = ((QuotaTreeCheck.Valid) QuotaTreeReading.check(Fixtures.yamlTree(Fixtures.path("quota/tree.yaml")))).tree();

  private final GpuLedger ledger = new GpuLedger();
  private final PodFactsIndex pods = new PodFactsIndex(PolicyParser::builtInDefault, ledger);
  private final LedgerFeed feed = new LedgerFeed(ledger, PolicyParser::builtInDefault).alsoTell(pods::current, pods::gone);
  private final QuotaLedgerBook books = new QuotaLedgerBook(ledger, PolicyParser::builtInDefault, pods);
  private List<Pod> teamA;

  @BeforeEach
  void teamAsPods() {
    Fixtures.nodes(Fixtures.path("quota/nodes.yaml")).forEach(feed::node);
    teamA = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/pods-default-scheduler.yaml")), KubernetesList.class)
        .getItems().stream().map(Pod.class::cast).toList();
    teamA.forEach(this::told);
  }

  @Test
  void aBoundPodWithoutAnnotationsCountsWhatItAsksOnItsLeafAndAncestors() {
    assertThat(ledger.claim("elsewhere-0-uid")).isEmpty();

    var book = books.book(TREE);

    assertThat(book.used(TREE.leafOf("quota-a").orElseThrow())).isEqualTo(QuotaResources.of("nvidia.com/gpu", 4));
    assertThat(book.used(TREE.root())).isEqualTo(QuotaResources.of("nvidia.com/gpu", 4));
    assertThat(books.pods(TREE).get("elsewhere-0-uid")).isEqualTo(new QuotaPod("elsewhere-0-uid", "quota-a",
        QuotaResources.of("nvidia.com/gpu", 2), 100, Instant.parse("2026-11-22T10:00:00Z").toEpochMilli(), Optional.empty()));
  }

  @Test
  void aPodTheLedgerHoldsGpusForCountsOnceByItsClaimAndAPendingPodNothing() {
    assertThat(ledger.claim("placed-0-uid").orElseThrow().gpus()).containsExactly(0, 1);

    assertThat(books.pods(TREE).keySet()).containsExactlyInAnyOrder("placed-0-uid", "elsewhere-0-uid");
    assertThat(books.pods(TREE).get("placed-0-uid").ask()).isEqualTo(QuotaResources.of("nvidia.com/gpu", 2));
    assertThat(books.bookWithout(TREE, List.of("placed-0-uid")).used(TREE.leafOf("quota-a").orElseThrow()))
        .isEqualTo(QuotaResources.of("nvidia.com/gpu", 2));
  }

  @Test
  void aStatusUpdateLeavesTheGenerationAndTheBookAsTheyWere() {
    var generation = pods.generation();
    var book = books.book(TREE);

    var ready = KubernetesJson.mapper().convertValue(teamA.get(0), Pod.class);
    ready.getMetadata().setResourceVersion("2");
    ready.getStatus().setConditions(List.of(new PodConditionBuilder().withType("Ready").withStatus("True").build()));
    told(ready);

    assertThat(pods.generation()).isEqualTo(generation);
    assertThat(books.book(TREE)).isSameAs(book);
  }

  @Test
  void aPendingPodAppearingLeavesTheGenerationAndBindingItCountsIt() {
    var generation = pods.generation();
    var pending = KubernetesJson.mapper().convertValue(teamA.get(2), Pod.class);
    pending.getMetadata().setName("waiting-1");
    pending.getMetadata().setUid("waiting-1-uid");
    told(pending);
    assertThat(pods.generation()).isEqualTo(generation);

    pending.getSpec().setNodeName("whole-b");
    told(pending);

    assertThat(pods.generation()).isNotEqualTo(generation);
    assertThat(books.book(TREE).used(TREE.leafOf("quota-a").orElseThrow())).isEqualTo(QuotaResources.of("nvidia.com/gpu", 8));
  }

  @Test
  void aBoundPodGoneCountsNoMore() {
    var generation = pods.generation();
    assertThat(books.book(TREE).used(TREE.root())).isEqualTo(QuotaResources.of("nvidia.com/gpu", 4));

    feed.podGone(feed.strip(teamA.get(0)));

    assertThat(pods.generation()).isNotEqualTo(generation);
    assertThat(books.book(TREE).used(TREE.root())).isEqualTo(QuotaResources.of("nvidia.com/gpu", 2));
  }

  /** As the pod informer tells it: the pod its store keeps. */
  private void told(Pod pod) {
    feed.pod(feed.strip(pod));
  }
}
