package io.gpuadmission.gang;

import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.gpuadmission.cluster.ClusterEvents;
import java.time.Clock;
import org.jboss.logging.Logger;

/** Events on gang members, as {@code kubectl describe pod} shows them beside kube-scheduler's own. */
public final class GangEvents {
  private static final Logger LOG = Logger.getLogger(GangEvents.class);

  private final KubernetesClient client;
  private final Clock clock;

  public GangEvents(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  void normal(GangMember member, String reason, String message) {
    publish(member, "Normal", reason, message);
  }

  void warning(GangMember member, String reason, String message) {
    publish(member, "Warning", reason, message);
  }

  private void publish(GangMember member, String type, String reason, String message) {
    var about = new ObjectReferenceBuilder().withApiVersion("v1").withKind("Pod").withName(member.name())
        .withNamespace(member.namespace()).withUid(member.uid()).build();
    try {
      ClusterEvents.publish(client, clock.instant(), about, type, reason, message);
    } catch (RuntimeException e) {
      // An Event is a courtesy: the plan stands without it.
      LOG.debugf("could not publish Event %s on %s: %s", reason, member.pod(), e.getMessage());
    }
  }
}
