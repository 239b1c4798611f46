package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.placement.GpuAnnotations;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.GpuClaim;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** GPU pods as the ledger needs them: recognised, stripped to the fields it reads, listed in pages. */
public final class BoundPods {
  static final long PAGE = 500;

  private BoundPods() {}

  public static boolean isGpuPod(Pod pod, GpuPolicy policy) {
    return GpuAsk.of(pod, policy).kind() != GpuAsk.Kind.NONE;
  }

  /** Every bound GPU pod's claim, from a fresh paged list (consistent with what is bound now). */
  public static List<GpuClaim> list(KubernetesClient client, GpuPolicy policy) {
    var claims = new ArrayList<GpuClaim>();
    String next = null;
    do {
      var options = new ListOptionsBuilder().withLimit(PAGE).withContinue(next).build();
      var page = client.pods().inAnyNamespace().list(options);
      for (var pod : page.getItems()) {
        if (isGpuPod(pod, policy)) {
          GpuAnnotations.claimOf(pod).ifPresent(claims::add);
        }
      }
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
    return claims;
  }

  /** A copy with only what the ledger reads: identity, GPU annotations, node, resources, phase. */
  static Pod strip(Pod pod) {
    var annotations = pod.getMetadata().getAnnotations() == null ? Map.<String, String>of() : pod.getMetadata().getAnnotations();
    var kept =
        annotations.entrySet().stream()
            .filter(e -> e.getKey().startsWith("ALIYUN_COM_GPU_MEM_") || e.getKey().equals(GpuAnnotations.GPU_INDICES))
            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
    var containers =
        pod.getSpec() == null || pod.getSpec().getContainers() == null
            ? List.<io.fabric8.kubernetes.api.model.Container>of()
            : pod.getSpec().getContainers().stream()
                .map(c -> new ContainerBuilder().withName(c.getName()).withResources(c.getResources()).build())
                .toList();
    return new PodBuilder()
        .withNewMetadata()
        .withName(pod.getMetadata().getName())
        .withNamespace(pod.getMetadata().getNamespace())
        .withUid(pod.getMetadata().getUid())
        .withResourceVersion(pod.getMetadata().getResourceVersion())
        .withAnnotations(kept)
        .endMetadata()
        .withNewSpec()
        .withNodeName(pod.getSpec() == null ? null : pod.getSpec().getNodeName())
        .withContainers(containers)
        .endSpec()
        .withNewStatus()
        .withPhase(pod.getStatus() == null ? null : pod.getStatus().getPhase())
        .endStatus()
        .build();
  }
}
