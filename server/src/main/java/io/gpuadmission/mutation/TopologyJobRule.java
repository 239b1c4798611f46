package io.gpuadmission.mutation;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.gpuadmission.pod.HostNamespace;
import io.gpuadmission.pod.PodResources;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.TopologyPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A pod of a topology-aware training job gets what ACK's topology scheduler needs: whole GPUs
 * counted as {@code aliyun.com/gpu}, the host's IPC, network and PID namespaces (NCCL over
 * NVLink and shared memory), host-network DNS, and the topology node pool.
 */
public final class TopologyJobRule implements PodMutationRule {
  public static final String NAME = "topology-job";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void apply(Pod pod, MutationContext context, MutationReport report) {
    var policy = context.policy();
    var topology = policy.topology();
    var job = TopologyJob.of(pod, topology);
    if (job.isEmpty()) {
      return;
    }
    var jobName = job.get().displayName();
    if (!topology.allowsNamespace(context.namespace())) {
      report.note(
          "topology job \"" + jobName + "\" left unchanged: namespace \"" + context.namespace()
              + "\" is not in the policy's topology.allowedNamespaces");
      return;
    }
    var done = new ArrayList<String>();
    if (moveWholeGpuResource(pod, topology, jobName, report)) {
      done.add("moved " + topology.wholeGpuResource() + " to " + topology.resourceName());
    }
    var hostSettings = grantHostNamespaces(pod, topology, jobName, report);
    if (!hostSettings.isEmpty()) {
      done.add("set " + String.join(", ", hostSettings));
    }
    var dns = pod.getSpec().getDnsPolicy();
    // Only a pod that ends up on the host network needs host-network DNS (hostNetwork may have been left out).
    if (topology.hostNetwork() && Boolean.TRUE.equals(pod.getSpec().getHostNetwork()) && !topology.dnsPolicy().equals(dns)) {
      // ClusterFirst is the API server's default: the user did not choose it, so replace it.
      if (dns == null || dns.equals("ClusterFirst")) {
        pod.getSpec().setDnsPolicy(topology.dnsPolicy());
        done.add("dnsPolicy " + topology.dnsPolicy());
      } else {
        report.note("topology job \"" + jobName + "\": kept dnsPolicy " + dns);
      }
    }
    if (PoolSelection.select(
        pod, policy.nodeLabels().pool(), topology.pool(), "topology job \"" + jobName + "\"", report)) {
      done.add("nodeSelector " + policy.nodeLabels().pool() + "=" + topology.pool());
    }
    if (!done.isEmpty()) {
      report.changed(NAME, "topology job \"" + jobName + "\": " + String.join("; ", done));
    }
  }

  private static boolean moveWholeGpuResource(
      Pod pod, TopologyPolicy topology, String jobName, MutationReport report) {
    var moved = false;
    for (Container container : PodResources.allContainers(pod)) {
      var resources = container.getResources();
      if (resources == null) {
        continue;
      }
      var limits = rename(resources.getLimits(), topology, container.getName(), "limits", jobName, report);
      var requests = rename(resources.getRequests(), topology, container.getName(), "requests", jobName, report);
      if (limits != null) {
        resources.setLimits(limits);
        moved = true;
      }
      if (requests != null) {
        resources.setRequests(requests);
        moved = true;
      }
    }
    return moved;
  }

  /** A new map with the resource renamed in place (same position), or null when nothing moved. */
  private static Map<String, Quantity> rename(
      Map<String, Quantity> quantities,
      TopologyPolicy topology,
      String container,
      String field,
      String jobName,
      MutationReport report) {
    if (quantities == null || !quantities.containsKey(topology.wholeGpuResource())) {
      return null;
    }
    var renamed = new LinkedHashMap<String, Quantity>();
    var target = topology.resourceName();
    var hasTarget = quantities.containsKey(target);
    quantities.forEach(
        (name, quantity) -> {
          if (!name.equals(topology.wholeGpuResource())) {
            renamed.put(name, quantity);
          } else if (!hasTarget) {
            renamed.put(target, quantity);
          }
        });
    if (hasTarget) {
      report.note(
          "topology job \"" + jobName + "\": container \"" + container + "\" " + field + " had both "
              + topology.wholeGpuResource() + " and " + target + "; kept " + target + "="
              + quantities.get(target) + " and dropped " + topology.wholeGpuResource() + "="
              + quantities.get(topology.wholeGpuResource()));
    }
    return renamed;
  }

  private static List<String> grantHostNamespaces(
      Pod pod, TopologyPolicy topology, String jobName, MutationReport report) {
    var set = new ArrayList<String>();
    for (var namespace : HostNamespace.values()) {
      if (!namespace.missing(pod, topology)) {
        continue;
      }
      // Never patch a field the API server would refuse: say why it was left out instead.
      var conflict = namespace.conflict(pod);
      if (conflict.isPresent()) {
        report.note("topology job \"" + jobName + "\": left " + namespace.field() + " unset: " + conflict.get());
      } else {
        namespace.grant(pod);
        set.add(namespace.field());
      }
    }
    return set;
  }
}
