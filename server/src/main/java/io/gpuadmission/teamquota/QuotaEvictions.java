package io.gpuadmission.teamquota;

import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.cluster.ClusterEvents;
import io.gpuadmission.preemption.PodFacts;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * What reclaim does to the cluster, with the rights preemption already has: a victim gets the
 * {@code DisruptionTarget} condition kube-scheduler's preemption writes and is deleted, with an
 * Event naming the quota that took its GPUs back; the pending pod is nominated to the node.
 */
final class QuotaEvictions {
  private static final Logger LOG = Logger.getLogger(QuotaEvictions.class);
  static final String REASON = "QuotaReclaimed";

  private final KubernetesClient client;
  private final Clock clock;

  QuotaEvictions(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  /**
   * Whether the pod is still waiting, as the API server has it now: not bound, not being deleted,
   * the same UID. The informer's view lags by a moment, in which kube-scheduler may have bound it.
   */
  boolean stillPending(String namespace, String name, String uid) {
    var pod = client.pods().inNamespace(namespace).withName(name).get();
    return pod != null && uid.equals(pod.getMetadata().getUid()) && pod.getMetadata().getDeletionTimestamp() == null
        && (pod.getSpec() == null || pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty());
  }

  /** Evicts {@code victim}; false when it is gone or was recreated under its name meanwhile. */
  boolean evict(PodFacts victim, String message) {
    var condition =
        new PodConditionBuilder()
            .withType(PodFacts.DISRUPTION_TARGET)
            .withStatus("True")
            .withReason(PodFacts.PREEMPTION_BY_SCHEDULER)
            .withMessage("gpu-admission: " + message)
            .withLastTransitionTime(DateTimeFormatter.ISO_INSTANT.format(clock.instant().truncatedTo(ChronoUnit.SECONDS)))
            .build();
    var pod = client.pods().inNamespace(victim.namespace()).withName(victim.name());
    try {
      pod.editStatus(current -> {
        if (!victim.uid().equals(current.getMetadata().getUid())) {
          throw new IllegalStateException("recreated");
        }
        if (current.getStatus() == null) {
          current.setStatus(new PodStatus());
        }
        var conditions = new ArrayList<PodCondition>();
        if (current.getStatus().getConditions() != null) {
          current.getStatus().getConditions().stream().filter(c -> !PodFacts.DISRUPTION_TARGET.equals(c.getType())).forEach(conditions::add);
        }
        conditions.add(condition);
        current.getStatus().setConditions(conditions);
        return current;
      });
      pod.delete();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
      return false;
    } catch (IllegalStateException recreated) {
      return false;
    }
    publish(victim.namespace(), victim.name(), victim.uid(), "Warning", REASON, message);
    return true;
  }

  void nominate(String namespace, String name, String node) {
    var status = client.getKubernetesSerialization().asJson(Map.of("status", Map.of("nominatedNodeName", node)));
    try {
      client.pods().inNamespace(namespace).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), status);
    } catch (KubernetesClientException e) {
      LOG.infof("could not nominate %s/%s to %s after reclaim (%s)", namespace, name, node, e.getMessage());
    }
  }

  void publish(String namespace, String name, String uid, String type, String reason, String message) {
    var about = new ObjectReferenceBuilder().withApiVersion("v1").withKind("Pod").withNamespace(namespace).withName(name).withUid(uid).build();
    try {
      ClusterEvents.publish(client, clock.instant(), about, type, reason, message);
    } catch (RuntimeException e) {
      LOG.debugf("could not publish Event %s on %s/%s: %s", reason, namespace, name, e.getMessage());
    }
  }
}
