package io.gpuadmission.validation;

import io.gpuadmission.pod.ResourceAsk.Difference;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.validation.WorkloadValidator.TemplatePod;
import java.util.ArrayList;
import java.util.List;

/**
 * Gang checks on a workload's templates, before any pod exists: every replica type in the gang
 * carries the same gpu-topology value and resources, and gpu-topology-replica equals the number
 * of pods the workload makes.
 */
final class GangTemplateRules {
  private GangTemplateRules() {}

  static void check(WorkloadKind kind, List<TemplatePod> pods, GpuPolicy policy, ValidationResult result) {
    var gang = new ArrayList<TemplatePod>();
    for (var p : pods) {
      if (p.job(policy).isPresent()) {
        gang.add(p);
      }
    }
    if (gang.isEmpty()) {
      return;
    }
    var jobLabel = policy.topology().jobLabel();
    var replicaLabel = policy.topology().replicaLabel();
    var withGpus = gang.stream().filter(p -> TopologyJob.asksWholeGpus(p.pod(), policy.topology())).count();
    if (withGpus > 0 && withGpus < gang.size()) {
      var cpuOnly = gang.stream().filter(p -> !TopologyJob.asksWholeGpus(p.pod(), policy.topology())).findFirst().get();
      var role = cpuOnly.template().role();
      result.refuse(
          GangRules.CONSISTENCY,
          cpuOnly.template().path() + ".metadata.labels",
          role + " carries the " + jobLabel + " labels but asks for no GPU; only the replicas with GPUs form a topology"
              + " gang: remove the " + jobLabel + " and " + replicaLabel + " labels from " + role);
      return;
    }
    var first = gang.get(0);
    var firstJob = first.job(policy).get();
    for (var other : gang.subList(1, gang.size())) {
      var job = other.job(policy).get();
      if (!job.label().equals(firstJob.label())) {
        result.refuse(
            GangRules.CONSISTENCY,
            other.template().path() + ".metadata.labels",
            other.template().role() + " has " + jobLabel + " \"" + job.label() + "\" but " + first.template().role() + " has \""
                + firstJob.label() + "\"; all replicas of a gpu-topology job must carry the same value");
        return;
      }
      if (!job.replicas().equals(firstJob.replicas())) {
        result.refuse(
            ReplicaLabelRule.NAME,
            other.template().path() + ".metadata.labels",
            other.template().role() + " has " + replicaLabel + " \"" + job.replicas() + "\" but " + first.template().role()
                + " has \"" + firstJob.replicas() + "\"; all replicas of a gpu-topology job must declare the same total");
        return;
      }
      var difference = other.ask().firstDifference(first.ask());
      if (difference.isPresent()) {
        result.refuse(
            GangRules.CONSISTENCY,
            other.template().path() + ".spec.containers",
            describe(difference.get(), other, first)
                + "; all replicas of a gpu-topology job must request the same resources");
        return;
      }
    }
    var declared = ReplicaLabelRule.count(firstJob.replicas());
    var total = gang.stream().mapToInt(p -> p.template().replicas()).sum();
    // Scaled to zero, the workload makes no pods: there is no gang to wait for, whatever it declares.
    if (declared.isPresent() && total > 0 && declared.getAsInt() != total) {
      // Training jobs say which replica types make the count; a single-template workload needs no breakdown.
      var parts = new ArrayList<String>();
      gang.forEach(p -> parts.add(p.template().role() + " " + p.template().replicas()));
      var breakdown = kind.trainingJob() ? " (" + String.join(" + ", parts) + ")" : "";
      result.refuse(
          ReplicaLabelRule.NAME,
          first.template().path() + ".metadata.labels." + policy.topology().replicaLabel(),
          replicaLabel + " is \"" + firstJob.replicas() + "\" but the " + (kind.trainingJob() ? "job" : kind.kind())
              + " makes " + total + (total == 1 ? " pod" : " pods") + breakdown + "; set " + replicaLabel + ": \"" + total
              + "\"");
    }
  }

  private static String describe(Difference d, TemplatePod pod, TemplatePod reference) {
    var role = pod.template().role();
    var ref = reference.template().role();
    switch (d.field()) {
      case "container":
        return role + " has container \"" + d.container() + "\" but " + ref + " has not";
      case "missing-container":
        return ref + " has container \"" + d.container() + "\" but " + role + " has not";
      default:
        var verb = d.field().equals("limits") ? "asks" : "requests";
        var where = pod.ask().containers().size() > 1 ? " (container \"" + d.container() + "\")" : "";
        return role + where + " " + verb + " " + d.resource() + "=" + d.mine().map(Object::toString).orElse("none") + " but "
            + ref + " " + verb + " " + d.theirs().map(Object::toString).orElse("none");
    }
  }
}
