package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.policy.GpuPolicy;
import org.junit.jupiter.api.Test;

/** A pod's ask is Kubernetes' effective request: init containers and sidecars counted as kube-scheduler counts them. */
class GpuAskTest {
  private final GpuPolicy policy = PlacementFixtures.dgx1Policy();

  @Test
  void aShareAskedOnlyByAnInitContainerIsTheInitContainers() {
    assertThat(GpuAsk.of(PlacementFixtures.pod("pod-init-only-share-5g.yaml"), policy)).isEqualTo(GpuAsk.share(5));
  }

  @Test
  void anInitContainerAskingMoreThanTheRegularContainersSetsTheShare() {
    assertThat(GpuAsk.of(PlacementFixtures.pod("pod-init-12g-main-4g.yaml"), policy)).isEqualTo(GpuAsk.share(12));
  }

  @Test
  void anInitContainerAskingMoreWholeGpusSetsTheCount() {
    assertThat(GpuAsk.of(PlacementFixtures.pod("pod-init-3-main-1-gpus.yaml"), policy)).isEqualTo(GpuAsk.whole(3));
  }

  @Test
  void sidecarsCountWithTheRegularContainersAndBesideEachLaterInitContainer() {
    assertThat(GpuAsk.of(PlacementFixtures.pod("pod-share-sidecars.yaml"), policy)).isEqualTo(GpuAsk.share(8));
  }

  @Test
  void regularContainersAreSummed() {
    assertThat(GpuAsk.of(PlacementFixtures.pod("pod-share-8g.yaml"), policy)).isEqualTo(GpuAsk.share(8));
  }
}
