package io.gpuadmission.admission;

import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.gpuadmission.admission.AdmissionMetrics.Outcome;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.function.Function;

/**
 * HTTP only: decode the AdmissionReview, hand it to the service, encode the answer. Runs on the
 * event loop: the services read in-memory caches and never block.
 */
@Path("/")
public class AdmissionResource {
  private final MutationService mutation;
  private final ValidationService validation;
  private final AdmissionMetrics metrics;

  public AdmissionResource(MutationService mutation, ValidationService validation, AdmissionMetrics metrics) {
    this.mutation = mutation;
    this.validation = validation;
    this.metrics = metrics;
  }

  @POST
  @Path("mutate")
  @NonBlocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public Response mutate(byte[] body) {
    return answer(body, MutationService.ENDPOINT, mutation::review);
  }

  @POST
  @Path("validate")
  @NonBlocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public Response validate(byte[] body) {
    return answer(body, ValidationService.ENDPOINT, validation::review);
  }

  private Response answer(byte[] body, String endpoint, Function<DecodedReview, AdmissionResponse> service) {
    var start = System.nanoTime();
    if (body != null && body.length > BodySizeLimit.LIMIT) {
      // Only a chunked body gets here (BodySizeLimit refused a declared one unread).
      metrics.record(endpoint, Outcome.MALFORMED, start);
      return Response.status(413).type(MediaType.APPLICATION_JSON)
          .entity(BodySizeLimit.tooLarge("chunked request body of " + body.length + " bytes")).build();
    }
    try {
      return Response.ok(ReviewCodec.encode(service.apply(ReviewCodec.decode(body)))).build();
    } catch (MalformedReviewException | MalformedObjectException e) {
      metrics.record(endpoint, Outcome.MALFORMED, start);
      return Response.status(Response.Status.BAD_REQUEST).type(MediaType.APPLICATION_JSON)
          .entity(StatusBody.of(400, "BadRequest", e.getMessage())).build();
    }
  }
}
