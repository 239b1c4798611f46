package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.fabric8.kubernetes.api.model.Status;

/** The body of an HTTP error: a Kubernetes Status saying what is wrong, as the API server writes one. */
final class StatusBody {
  private StatusBody() {}

  static byte[] of(int code, String reason, String message) {
    var status = new Status();
    status.setStatus("Failure");
    status.setCode(code);
    status.setReason(reason);
    status.setMessage(message);
    try {
      return KubernetesJson.mapper().writeValueAsBytes(status);
    } catch (JsonProcessingException unexpected) {
      throw new IllegalStateException("a Status always serializes", unexpected);
    }
  }
}
