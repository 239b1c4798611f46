package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/** A core/v1 Event about one object, from source gpu-admission, as {@code kubectl describe} shows it. */
public final class ClusterEvents {
  private ClusterEvents() {}

  /** Creates the Event in the object's namespace; throws what the API server answers. */
  public static void publish(KubernetesClient client, Instant now, ObjectReference about, String type, String reason, String message) {
    var at = DateTimeFormatter.ISO_INSTANT.format(now.truncatedTo(ChronoUnit.SECONDS));
    var event =
        new EventBuilder()
            .withNewMetadata()
            .withGenerateName(about.getName() + ".")
            .withNamespace(about.getNamespace())
            .endMetadata()
            .withInvolvedObject(about)
            .withType(type)
            .withReason(reason)
            .withMessage(message.length() <= 1000 ? message : message.substring(0, 997) + "...")
            .withNewSource("gpu-admission", null)
            .withFirstTimestamp(at)
            .withLastTimestamp(at)
            .withCount(1)
            .build();
    client.v1().events().inNamespace(about.getNamespace()).resource(event).create();
  }
}
