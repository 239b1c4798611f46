package io.gpuadmission.admission;

import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.gpuadmission.admission.AdmissionMetrics.Outcome;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.List;
import java.util.function.Function;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * HTTP only: {@code POST /mutate} and {@code POST /validate} take the AdmissionReview's bytes, hand
 * them to the service and write the answer's bytes, on the event loop (the services read in-memory
 * caches and never block). Plain Vert.x routes rather than a JAX-RS resource: a review needs no
 * media-type negotiation, reader or writer lookup or request context, and on the cheapest review
 * those took about a tenth of the event loop's time (bench/README.md, issue 10). The body is read
 * as bytes whatever its declared content type.
 */
@ApplicationScoped
public class AdmissionRoutes {
  /** The paths the webhook configurations call. */
  public static final List<String> PATHS = List.of("/" + MutationService.ENDPOINT, "/" + ValidationService.ENDPOINT);

  private static final String JSON = "application/json";

  private final MutationService mutation;
  private final ValidationService validation;
  private final AdmissionMetrics metrics;
  private final long bodyLimit;

  public AdmissionRoutes(
      MutationService mutation,
      ValidationService validation,
      AdmissionMetrics metrics,
      @ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize bodyLimit) {
    this.mutation = mutation;
    this.validation = validation;
    this.metrics = metrics;
    this.bodyLimit = bodyLimit.asLongValue();
  }

  void install(@Observes Router router) {
    router.post("/" + MutationService.ENDPOINT)
        .handler(context -> read(context, MutationService.ENDPOINT, mutation::review));
    router.post("/" + ValidationService.ENDPOINT)
        .handler(context -> read(context, ValidationService.ENDPOINT, validation::review));
  }

  /**
   * Gathers the body, held to the size limit also when it comes without a Content-Length (a
   * declared one over the limit was refused before, by {@link BodySizeLimit}).
   */
  private void read(RoutingContext context, String endpoint, Function<DecodedReview, AdmissionResponse> service) {
    var request = context.request();
    var body = new BoundedBody(Buffer.buffer());
    request.handler(chunk -> {
      if (body.refused) {
        return;
      }
      if ((long) body.bytes.length() + chunk.length() > bodyLimit) {
        body.refused = true;
        BodySizeLimit.refuse(context, "request body is larger than the " + bodyLimit + "-byte limit");
        return;
      }
      body.bytes.appendBuffer(chunk);
    });
    request.endHandler(end -> {
      if (!body.refused) {
        answer(context, endpoint, service, body.bytes.getBytes());
      }
    });
    request.exceptionHandler(failure -> body.refused = true); // the connection is gone: nobody to answer
    request.resume();
  }

  private void answer(
      RoutingContext context, String endpoint, Function<DecodedReview, AdmissionResponse> service, byte[] body) {
    var start = System.nanoTime();
    byte[] answer;
    try {
      answer = ReviewCodec.encode(service.apply(ReviewCodec.decode(body)));
    } catch (MalformedReviewException e) {
      metrics.record(endpoint, Outcome.MALFORMED, start);
      context.response().setStatusCode(400).putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(Buffer.buffer(BadRequest.of(e)));
      return;
    } catch (RuntimeException bug) {
      // The services answer every failure they expect; this is a bug. Quarkus' failure handler
      // logs it and answers 500, instead of leaving kube-apiserver waiting for its timeout.
      context.fail(bug);
      return;
    }
    context.response().putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(Buffer.buffer(answer));
  }

  /** A request's body as it arrives; one request is read on one event loop, so plain fields do. */
  private static final class BoundedBody {
    final Buffer bytes;
    boolean refused;

    BoundedBody(Buffer bytes) {
      this.bytes = bytes;
    }
  }
}
