package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.bench.ScaleCluster;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.testing.MockApiServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The informers read nodes and pods in pages (limit/continue) as kube-apiserver serves a large
 * list, and keep only what is read: the GPU pods, stripped, and every node without its images.
 */
class PagedInformersTest {
  @Test
  void listsNodesAndPodsInPagesAndKeepsOnlyTheGpuPods() throws Exception {
    // 1,200 pods: three pages of 500; 300 of them GPU shares (at most one per GPU of the 40 nodes), the rest a Deployment's CPU pods.
    var cluster = new ScaleCluster(40, 1_200, 300, 40);
    var lists = new CopyOnWriteArrayList<String>();
    try (var apiServer = MockApiServer.start(0, null)) {
      apiServer.answerInstead(request -> {
        var answer = cluster.generated(request);
        if (answer != null) {
          lists.add(request.getPath());
        }
        return answer;
      });
      var ledger = new GpuLedger();
      try (var client = apiServer.informerClient();
          var watcher = new LedgerWatcher(client, ledger, PolicyParser::builtInDefault).start()) {
        await().atMost(Duration.ofSeconds(60)).until(watcher::synced);

        // The first list; the mock may answer a later watch so that the informer lists again, in pages too.
        assertThat(lists.stream().filter(p -> p.startsWith("/api/v1/pods?")).map(PagedInformersTest::paging).limit(3))
            .containsExactly("limit=500", "limit=500 continue=500", "limit=500 continue=1000");
        assertThat(lists.stream().filter(p -> p.startsWith("/api/v1/nodes?")).map(PagedInformersTest::paging)).isNotEmpty().containsOnly("limit=500");
        assertThat(watcher.gpuPods()).hasSize(300).allSatisfy(pod -> {
          assertThat(pod.getMetadata().getName()).startsWith("share-");
          assertThat(pod.getMetadata().getManagedFields()).isEmpty();
          assertThat(pod.getStatus().getContainerStatuses()).isEmpty();
        });
        // The handlers hear of the pods after the store has them.
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.claims().size() == 300);
        assertThat(watcher.nodes()).hasSize(40).allSatisfy(node -> assertThat(node.getStatus().getImages()).isEmpty());
      }
    }
  }

  /**
   * A loaded API server may take longer over a page than fabric8's request timeout (the test
   * client's is 2 s, the shipped default 10 s): the informers wait for it as client-go does, up to
   * kube-apiserver's own limit of a minute, rather than time out and list again from the first
   * page, which on a large cluster may never end.
   */
  @Test
  void aListPageSlowerThanTheRequestTimeoutIsWaitedForNotListedAgain() throws Exception {
    var cluster = new ScaleCluster(4, 1_200, 30, 40);
    var lists = new CopyOnWriteArrayList<String>();
    var slowPageSent = new java.util.concurrent.atomic.AtomicBoolean();
    try (var apiServer = MockApiServer.start(0, null)) {
      apiServer.answerInstead(request -> {
        var answer = cluster.generated(request);
        if (answer != null) {
          lists.add(request.getPath());
          if (request.getPath().startsWith("/api/v1/pods?") && request.getPath().contains("continue=500") && slowPageSent.compareAndSet(false, true)) {
            answer.setBodyDelay(Duration.ofSeconds(4));
          }
        }
        return answer;
      });
      var ledger = new GpuLedger();
      try (var client = apiServer.informerClient();
          var watcher = new LedgerWatcher(client, ledger, PolicyParser::builtInDefault).start()) {
        assertThat(client.getConfiguration().getRequestConfig().getRequestTimeout()).isEqualTo(2000);
        await().atMost(Duration.ofSeconds(60)).until(watcher::synced);

        assertThat(slowPageSent).isTrue();
        assertThat(lists.stream().filter(p -> p.startsWith("/api/v1/pods?")).map(PagedInformersTest::paging).limit(3))
            .containsExactly("limit=500", "limit=500 continue=500", "limit=500 continue=1000");
        assertThat(watcher.gpuPods()).hasSize(30);
      }
    }
  }

  /** The paging parameters of a LIST request, in a fixed order. */
  private static String paging(String path) {
    var query = path.substring(path.indexOf('?') + 1);
    String limit = null;
    String next = null;
    for (var pair : query.split("&")) {
      if (pair.startsWith("limit=")) {
        limit = pair;
      } else if (pair.startsWith("continue=")) {
        next = pair;
      }
    }
    return next == null ? String.valueOf(limit) : limit + " " + next;
  }

  /** A node as kube-apiserver returns it (40 images, conditions, managed fields), reduced to exactly what is read. */
  @Test
  void aNodeIsReducedToWhatIsRead() throws Exception {
    var node = KubernetesJson.mapper().readValue(new ScaleCluster(1, 0, 0, 40).node(0), Node.class);
    node.getMetadata().getAnnotations().put("gpu-admission.io/gpu-memory", "16,16,16,16,16,16,16,16");
    node.getSpec().setUnschedulable(true);
    node.getSpec().setTaints(List.of(new io.fabric8.kubernetes.api.model.TaintBuilder().withKey("gpu").withEffect("NoSchedule").build()));

    var kept = KubernetesJson.mapper().readTree(KubernetesJson.mapper().writeValueAsString(NodeFields.strip(node)));

    assertThat(fieldNames(kept)).containsExactly("apiVersion", "kind", "metadata", "spec", "status");
    assertThat(fieldNames(kept.path("metadata"))).containsExactlyInAnyOrder("name", "uid", "resourceVersion", "labels", "annotations");
    assertThat(kept.at("/metadata/labels").size()).isEqualTo(node.getMetadata().getLabels().size());
    assertThat(fieldNames(kept.at("/metadata/annotations"))).containsExactly("gpu-admission.io/gpu-memory");
    assertThat(fieldNames(kept.path("spec"))).containsExactlyInAnyOrder("taints", "unschedulable");
    assertThat(fieldNames(kept.path("status"))).containsExactlyInAnyOrder("capacity", "allocatable");
    var json = KubernetesJson.mapper().writeValueAsString(node).length();
    assertThat(kept.toString().length()).as("kept bytes of a %d-byte node", json).isLessThan(json / 8);
  }

  private static List<String> fieldNames(com.fasterxml.jackson.databind.JsonNode object) {
    var names = new java.util.ArrayList<String>();
    object.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
