package io.gpuadmission.pod;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.Optional;

/**
 * What gang checks need of one pod of a topology job: its name, declared replica count,
 * controller and resources. Built from informer pods and from the recent-admissions ledger alike.
 */
public record GangMember(String name, String replicas, Optional<Owner> owner, ResourceAsk ask) {

  public static GangMember of(Pod pod, TopologyJob job) {
    var name = pod.getMetadata().getName();
    if (name == null || name.isEmpty()) {
      name = pod.getMetadata().getGenerateName() + "<generated>";
    }
    return new GangMember(name, job.replicas(), Owner.workloadOf(pod), ResourceAsk.of(pod));
  }
}
