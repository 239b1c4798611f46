package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.fabric8.kubernetes.api.model.Status;

/** The body of a 400: a Kubernetes Status naming what is wrong with the request. */
final class BadRequest {
  private BadRequest() {}

  static byte[] of(MalformedReviewException e) {
    var status = new Status();
    status.setStatus("Failure");
    status.setCode(400);
    status.setReason("BadRequest");
    status.setMessage(e.getMessage());
    try {
      return KubernetesJson.mapper().writeValueAsBytes(status);
    } catch (JsonProcessingException unexpected) {
      throw new IllegalStateException("a Status always serializes", unexpected);
    }
  }
}
