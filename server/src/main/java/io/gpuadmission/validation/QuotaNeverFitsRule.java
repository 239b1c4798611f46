package io.gpuadmission.validation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.QuotaAmounts;
import io.gpuadmission.policy.FeasibilityPolicy.OnInfeasible;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaTree;
import java.util.Optional;

/**
 * A GPU pod (or a workload's pod template) asking more than its namespace's quota leaf, or an
 * ancestor, allows at most: it can never run under the tree, however idle the cluster is. A gang
 * (a topology job placed together) counts its replicas together, as placement admits it whole.
 * Warned of by default, refused with policy {@code quotas.onNeverFits: refuse}.
 */
public final class QuotaNeverFitsRule {
  public static final String RULE = "quota-never-fits";

  private QuotaNeverFitsRule() {}

  /** Adds the warning or refusal for {@code pod} of {@code namespace} to {@code result}. */
  public static void check(Pod pod, String namespace, GpuPolicy policy, Optional<QuotaTree> tree, String path, ValidationResult result) {
    problem(pod, namespace, policy, tree).ifPresent(problem -> {
      if (policy.quotas().onNeverFits() == OnInfeasible.REFUSE) {
        result.refuse(RULE, path, problem);
      } else {
        result.warn("gpu-admission: " + problem + "; admitted as policy quotas.onNeverFits is warn: it stays Pending");
      }
    });
  }

  static Optional<String> problem(Pod pod, String namespace, GpuPolicy policy, Optional<QuotaTree> tree) {
    if (!policy.quotas().enabled() || tree.isEmpty()) {
      return Optional.empty();
    }
    var leaf = tree.get().leafOf(namespace);
    var ask = GpuAsk.of(pod, policy);
    if (leaf.isEmpty() || ask.kind() == GpuAsk.Kind.NONE) {
      return Optional.empty();
    }
    var members = TopologyJob.of(pod, policy.topology()).filter(TopologyJob::placedTogether).map(QuotaNeverFitsRule::replicas).orElse(1);
    var one = QuotaAmounts.of(ask, policy);
    var asked = QuotaResources.NONE;
    for (var i = 0; i < members; i++) {
      asked = asked.add(one);
    }
    for (var node : leaf.get().pathToRoot()) {
      for (var resource : asked.names()) {
        if (node.max().has(resource) && asked.get(resource) > node.max().get(resource)) {
          var what = members > 1 ? "its gang of " + members + " asks " : "asks ";
          return Optional.of("quota " + node.name() + ": " + resource + " " + what + QuotaResources.format(resource, asked.get(resource))
              + " > max " + QuotaResources.format(resource, node.max().get(resource)) + ", so it can never run in namespace " + namespace
              + " (ElasticQuotaTree " + node.path() + ")");
        }
      }
    }
    return Optional.empty();
  }

  private static int replicas(TopologyJob job) {
    try {
      return Math.max(1, Integer.parseInt(job.replicas().trim()));
    } catch (NumberFormatException unreadable) {
      return 1;
    }
  }
}
