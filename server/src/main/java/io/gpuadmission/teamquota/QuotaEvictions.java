package io.gpuadmission.teamquota;

import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.gpuadmission.cluster.ClusterEvents;
import io.gpuadmission.placement.HeldRoom;
import io.gpuadmission.preemption.PodFacts;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * What reclaim does to the cluster, with the rights preemption already has: a victim gets the
 * {@code DisruptionTarget} condition kube-scheduler's preemption writes and is deleted, with an
 * Event naming the quota that took its GPUs back; the pending pod is nominated to the node, and the
 * room held for it is written on it.
 */
final class QuotaEvictions {
  private static final Logger LOG = Logger.getLogger(QuotaEvictions.class);
  static final String REASON = "QuotaReclaimed";
  private static final int CONFLICT_ATTEMPTS = 3;

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
      onConflictAgain(() -> pod.editStatus(current -> {
        if (!victim.uid().equals(current.getMetadata().getUid())) {
          throw new IllegalStateException("recreated");
        }
        if (current.getStatus() == null) {
          current.setStatus(new PodStatus());
        }
        current.getStatus().setConditions(replaced(current.getStatus().getConditions(), condition));
        return current;
      }));
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

  /**
   * Nominates the pending pod to the room's node, as preemption nominates its preemptor, and
   * writes the room held for it on the pod ({@link HeldRoom}), for the other replicas and the next
   * leader.
   */
  void nominate(String namespace, String name, String uid, HeldRoom room) {
    writeStatus(namespace, name, uid, room, true);
  }

  /** Holds the room for the pending pod longer, on the pod ({@link HeldRoom}). */
  void holdRoom(String namespace, String name, String uid, HeldRoom room) {
    writeStatus(namespace, name, uid, room, false);
  }

  private void writeStatus(String namespace, String name, String uid, HeldRoom room, boolean nominate) {
    var condition = room.condition(clock.instant());
    try {
      onConflictAgain(() -> client.pods().inNamespace(namespace).withName(name).editStatus(current -> {
        if (!uid.equals(current.getMetadata().getUid())) {
          throw new IllegalStateException("recreated under its name");
        }
        if (current.getMetadata().getDeletionTimestamp() != null || (current.getSpec() != null && current.getSpec().getNodeName() != null
            && !current.getSpec().getNodeName().isEmpty())) {
          throw new IllegalStateException("bound or being deleted"); // nothing to hold any more
        }
        if (current.getStatus() == null) {
          current.setStatus(new PodStatus());
        }
        if (nominate) {
          current.getStatus().setNominatedNodeName(room.node());
        }
        current.getStatus().setConditions(replaced(current.getStatus().getConditions(), condition));
        return current;
      }));
    } catch (IllegalStateException gone) {
      LOG.debugf("no room held on node %s for %s/%s: %s", room.node(), namespace, name, gone.getMessage());
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        LOG.warnf("could not write the room held on node %s for %s/%s after reclaim (%s): only this replica holds it", room.node(), namespace,
            name, e.getMessage());
      }
    }
  }

  /**
   * Runs {@code edit} again when the pod changed between its read and its patch (409: fabric8's
   * edit sends the resourceVersion it read; kube-scheduler writes the same pod's status).
   */
  private static void onConflictAgain(Runnable edit) {
    for (var attempt = 1; ; attempt++) {
      try {
        edit.run();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == CONFLICT_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  /** {@code conditions} with {@code condition} in place of any of its type. */
  private static List<PodCondition> replaced(List<PodCondition> conditions, PodCondition condition) {
    var out = new ArrayList<PodCondition>();
    if (conditions != null) {
      conditions.stream().filter(c -> c != null && !condition.getType().equals(c.getType())).forEach(out::add);
    }
    out.add(condition);
    return out;
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
