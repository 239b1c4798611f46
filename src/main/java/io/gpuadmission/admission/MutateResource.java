package io.gpuadmission.admission;

import io.gpuadmission.admission.AdmissionMetrics.Outcome;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/** HTTP only: decode the AdmissionReview, hand it to {@link MutationService}, encode the answer. */
@Path("/mutate")
public class MutateResource {
  private final MutationService service;
  private final AdmissionMetrics metrics;

  public MutateResource(MutationService service, AdmissionMetrics metrics) {
    this.service = service;
    this.metrics = metrics;
  }

  @POST
  @NonBlocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public Response mutate(byte[] body) {
    var start = System.nanoTime();
    try {
      return Response.ok(ReviewCodec.encode(service.review(ReviewCodec.decode(body)))).build();
    } catch (MalformedReviewException e) {
      metrics.record(MutationService.ENDPOINT, Outcome.MALFORMED, start);
      return BadRequest.of(e);
    }
  }
}
