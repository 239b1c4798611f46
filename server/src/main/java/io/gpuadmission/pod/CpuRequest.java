package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Map;

/**
 * A pod's CPU request in millicores as kube-scheduler counts it against a node ({@code
 * resourcehelper.PodRequests}): the sum over its containers; init containers run one after the
 * other, each beside the sidecars started before it (init containers with {@code restartPolicy:
 * Always}, which also run for the pod's life and so add to the sum), and the pod needs the most
 * any of those moments needs; plus the RuntimeClass overhead. A container without a CPU request
 * counts its limit (the API server sets the request to the limit).
 */
public final class CpuRequest {
  private static final BigDecimal MILLI = BigDecimal.valueOf(1000);

  private CpuRequest() {}

  public static long milli(Pod pod) {
    var spec = pod.getSpec();
    if (spec == null) {
      return 0;
    }
    var running = sum(spec.getContainers());
    long sidecars = 0;
    long initPeak = 0;
    if (spec.getInitContainers() != null) {
      for (var init : spec.getInitContainers()) {
        var own = of(init);
        if (init != null && "Always".equals(init.getRestartPolicy())) {
          running += own;
          sidecars += own;
          initPeak = Math.max(initPeak, sidecars);
        } else {
          initPeak = Math.max(initPeak, own + sidecars);
        }
      }
    }
    return Math.max(running, initPeak) + milli(spec.getOverhead() == null ? null : spec.getOverhead().get("cpu"));
  }

  private static long sum(List<Container> containers) {
    long sum = 0;
    if (containers != null) {
      for (var container : containers) {
        sum += of(container);
      }
    }
    return sum;
  }

  private static long of(Container container) {
    if (container == null || container.getResources() == null) {
      return 0;
    }
    var request = get(container.getResources().getRequests());
    return milli(request != null ? request : get(container.getResources().getLimits()));
  }

  private static Quantity get(Map<String, Quantity> map) {
    return map == null ? null : map.get("cpu");
  }

  /** Millicores, rounded up as Kubernetes' MilliValue rounds. */
  private static long milli(Quantity quantity) {
    return quantity == null ? 0 : QuantitySyntax.amount(quantity).multiply(MILLI).setScale(0, RoundingMode.CEILING).longValueExact();
  }
}
