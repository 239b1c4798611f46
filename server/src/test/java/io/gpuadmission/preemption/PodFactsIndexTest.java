package io.gpuadmission.preemption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.policy.PolicyParser;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Reading every pod again (a policy reload) against the pod informer telling of pods meanwhile. */
class PodFactsIndexTest {
  private final PodFactsIndex index = new PodFactsIndex(PolicyParser::builtInDefault, new GpuLedger());

  @Test
  void aPodDeletedWhileThePodsAreReadAgainDoesNotComeBack() throws InterruptedException {
    var pod = pod("gone-meanwhile");
    index.current(pod);
    var store = new CopyOnWriteArrayList<>(List.of(pod));
    var informer = new AtomicReference<Thread>();

    index.replaceAll(() -> {
      var read = List.copyOf(store);
      // Right after the read, the informer deletes the pod: from its store first, then its handler.
      store.clear();
      var handler = new Thread(() -> index.gone(pod));
      informer.set(handler);
      handler.start();
      await().atMost(Duration.ofSeconds(5)).until(() -> handler.getState() == Thread.State.BLOCKED || !handler.isAlive());
      return read;
    });
    informer.get().join();

    assertThat(index.facts("gone-meanwhile-uid")).isEmpty();
  }

  private static Pod pod(String name) {
    return new PodBuilder().withNewMetadata().withName(name).withNamespace("ml").withUid(name + "-uid").endMetadata()
        .withNewSpec().withPriority(100).withNodeName("a").addNewContainer().withName("c")
        .withNewResources().addToLimits("aliyun.com/gpu-mem", new Quantity("8")).endResources().endContainer().endSpec().build();
  }
}
