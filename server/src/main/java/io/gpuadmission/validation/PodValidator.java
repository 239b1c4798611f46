package io.gpuadmission.validation;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.pod.GangKey;
import io.gpuadmission.pod.GangMember;
import io.gpuadmission.pod.TopologyJob;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Judges a pod: the rules that need only the pod, then, for a member of a topology job, the gang
 * rules against the members already admitted (informer cache plus this replica's recent ledger).
 */
public final class PodValidator {
  /** Rules that hold for any pod and for any workload's pod template. */
  public static final List<PodRule> POD_RULES =
      List.of(new MixedGpuResourcesRule(), new ReplicaLabelRule(), new TopologyNamespaceRule(), new HostNamespaceConflictRule(), new PodSecurityRule(), new FeasibilityRule(), new GpushareContainersRule());

  private final RecentAdmissions ledger;

  public PodValidator(RecentAdmissions ledger) {
    this.ledger = ledger;
  }

  /** {@code record} is false for dry runs: they are judged the same but leave no trace. */
  public ValidationResult validate(PodSubject subject, boolean record) {
    var result = new ValidationResult();
    for (var rule : POD_RULES) {
      rule.check(subject, result);
    }
    var job = TopologyJob.of(subject.pod(), subject.policy().topology());
    if (job.isEmpty() || result.refused()) {
      return result;
    }
    var key = GangKey.of(subject.namespace(), subject.pod(), job.get());
    var self = GangMember.of(subject.pod(), job.get());
    var known = informerMembers(subject, key);
    ledger.decide(
        key,
        self,
        record,
        recent -> {
          var members = new LinkedHashMap<String, GangMember>();
          recent.forEach(m -> members.put(m.name(), m));
          known.forEach(m -> members.put(m.name(), m));
          members.remove(self.name());
          GangRules.check(key, self, new ArrayList<>(members.values()), subject.policy().topology(), result);
          return !result.refused();
        });
    return result;
  }

  private static List<GangMember> informerMembers(PodSubject subject, GangKey key) {
    var topology = subject.policy().topology();
    var members = new ArrayList<GangMember>();
    for (Pod pod : subject.cluster().gangPods(key.namespace(), key.label())) {
      var job = TopologyJob.of(pod, topology);
      if (job.isPresent() && GangKey.of(key.namespace(), pod, job.get()).equals(key)) {
        members.add(GangMember.of(pod, job.get()));
      }
    }
    return members;
  }
}
