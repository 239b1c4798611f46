package io.gpuadmission.gang;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
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
    var now = DateTimeFormatter.ISO_INSTANT.format(clock.instant().truncatedTo(ChronoUnit.SECONDS));
    var event =
        new EventBuilder()
            .withNewMetadata()
            .withGenerateName(member.name() + ".")
            .withNamespace(member.namespace())
            .endMetadata()
            .withNewInvolvedObject()
            .withApiVersion("v1")
            .withKind("Pod")
            .withName(member.name())
            .withNamespace(member.namespace())
            .withUid(member.uid())
            .endInvolvedObject()
            .withType(type)
            .withReason(reason)
            .withMessage(message)
            .withNewSource("gpu-admission", null)
            .withFirstTimestamp(now)
            .withLastTimestamp(now)
            .withCount(1)
            .build();
    try {
      client.v1().events().inNamespace(member.namespace()).resource(event).create();
    } catch (RuntimeException e) {
      // An Event is a courtesy: the plan stands without it.
      LOG.debugf("could not publish Event %s on %s: %s", reason, member.pod(), e.getMessage());
    }
  }
}
