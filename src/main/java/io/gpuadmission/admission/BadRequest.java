package io.gpuadmission.admission;

import io.fabric8.kubernetes.api.model.Status;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** A 400 whose body is a Kubernetes Status naming what is wrong with the request. */
final class BadRequest {
  private BadRequest() {}

  static Response of(MalformedReviewException e) {
    var status = new Status();
    status.setStatus("Failure");
    status.setCode(400);
    status.setReason("BadRequest");
    status.setMessage(e.getMessage());
    return Response.status(Response.Status.BAD_REQUEST).type(MediaType.APPLICATION_JSON).entity(status).build();
  }
}
