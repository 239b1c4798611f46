package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.preemption.PodFactsIndex;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTree;
import io.gpuadmission.quota.QuotaTreeCheck;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.teamquota.QuotaLedgerBook;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The handlers every informer of the service reports through. fabric8's store is keyed by namespace
 * and name: a pod deleted and created again under its name while the watch was down comes back, on
 * the relist, as an update from the old pod to the new one, never as a delete.
 */
class InformersTest {
  private final List<String> told = new ArrayList<>();
  private final io.fabric8.kubernetes.client.informers.ResourceEventHandler<Pod> handler =
      Informers.handlerByUid(p -> told.add("current " + p.getMetadata().getUid()), p -> told.add("gone " + p.getMetadata().getUid()));
  private final io.fabric8.kubernetes.client.informers.ResourceEventHandler<Pod> byName =
      Informers.handler(p -> told.add("current " + p.getMetadata().getUid()), p -> told.add("gone " + p.getMetadata().getUid()));

  @Test
  void anUpdateOfTheSameObjectIsItAsItIsNow() {
    handler.onUpdate(pod("web-0", "uid-1", "1"), pod("web-0", "uid-1", "2"));

    assertThat(told).containsExactly("current uid-1");
  }

  @Test
  void anUpdateToAnotherUidIsTheOldObjectGoneThenTheNewOne() {
    handler.onUpdate(pod("web-0", "uid-1", "1"), pod("web-0", "uid-2", "7"));

    assertThat(told).containsExactly("gone uid-1", "current uid-2");
  }

  @Test
  void toAConsumerByNameAnObjectCreatedAgainUnderItsNameIsTheSameObjectChanged() {
    // A node or ConfigMap must not be missing, even for a moment, to a filter running beside.
    byName.onUpdate(pod("web-0", "uid-1", "1"), pod("web-0", "uid-2", "7"));

    assertThat(told).containsExactly("current uid-2");
  }

  @Test
  void addsAndDeletesAreTheObjectAsItIsAndGone() {
    handler.onAdd(pod("web-0", "uid-1", "1"));
    handler.onDelete(pod("web-0", "uid-1", "2"), true);

    assertThat(told).containsExactly("current uid-1", "gone uid-1");
  }

  /**
   * The GPU ledger's pod handler as {@link LedgerWatcher} wires it: both of team A's bound pods
   * recreated pending under their names during a watch gap free the GPUs the ledger held and count
   * in team usage no more.
   */
  @Test
  void podsRecreatedUnderTheirNamesDuringAWatchGapHoldAndCountNothingOfTheOldPods() {
    var tree = ((QuotaTreeCheck.Valid) QuotaTreeReading.check(Fixtures.yamlTree(Fixtures.path("quota/tree.yaml")))).tree();
    var ledger = new GpuLedger();
    var index = new PodFactsIndex(PolicyParser::builtInDefault, ledger);
    var feed = new LedgerFeed(ledger, PolicyParser::builtInDefault).alsoTell(index::current, index::gone);
    var books = new QuotaLedgerBook(ledger, PolicyParser::builtInDefault, index);
    var pods = Informers.<Pod>handlerByUid(feed::pod, feed::podGone);
    Fixtures.nodes(Fixtures.path("quota/nodes.yaml")).forEach(feed::node);
    var teamA = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/pods-default-scheduler.yaml")), KubernetesList.class)
        .getItems().stream().map(Pod.class::cast).map(feed::strip).toList();
    teamA.forEach(pods::onAdd);
    assertThat(ledger.claim("placed-0-uid").orElseThrow().gpus()).containsExactly(0, 1);
    assertThat(used(books, tree)).isEqualTo(QuotaResources.of("nvidia.com/gpu", 4));

    var placedAgain = recreatedPending(teamA.get(1), "placed-0-uid-2");
    pods.onUpdate(teamA.get(1), feed.strip(placedAgain));

    assertThat(ledger.claim("placed-0-uid")).isEmpty();
    assertThat(ledger.claims()).isEmpty();
    assertThat(index.facts("placed-0-uid")).isEmpty();
    assertThat(index.facts("placed-0-uid-2")).isPresent();
    assertThat(books.pods(tree).keySet()).containsExactly("elsewhere-0-uid");
    assertThat(used(books, tree)).isEqualTo(QuotaResources.of("nvidia.com/gpu", 2));

    pods.onUpdate(teamA.get(0), feed.strip(recreatedPending(teamA.get(0), "elsewhere-0-uid-2")));

    assertThat(index.facts("elsewhere-0-uid")).isEmpty();
    assertThat(books.pods(tree)).isEmpty();
    assertThat(used(books, tree)).isEqualTo(QuotaResources.NONE);
  }

  private static QuotaResources used(QuotaLedgerBook books, QuotaTree tree) {
    return books.book(tree).used(tree.leafOf("quota-a").orElseThrow());
  }

  /** The StatefulSet's pod made again under {@code pod}'s name: a new UID, pending, none of the old pod's annotations. */
  private static Pod recreatedPending(Pod pod, String uid) {
    var again = KubernetesJson.mapper().convertValue(pod, Pod.class);
    again.getMetadata().setUid(uid);
    again.getMetadata().setResourceVersion("9");
    again.getMetadata().setAnnotations(null);
    again.getSpec().setNodeName(null);
    again.getStatus().setPhase("Pending");
    again.getStatus().setStartTime(null);
    return again;
  }

  private static Pod pod(String name, String uid, String resourceVersion) {
    return new PodBuilder().withNewMetadata().withNamespace("apps").withName(name).withUid(uid).withResourceVersion(resourceVersion).endMetadata().build();
  }
}
