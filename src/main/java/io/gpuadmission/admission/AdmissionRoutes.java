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
    for (var endpoint : List.of(MutationService.ENDPOINT, ValidationService.ENDPOINT)) {
      Function<DecodedReview, AdmissionResponse> service =
          endpoint.equals(MutationService.ENDPOINT) ? mutation::review : validation::review;
      router.post("/" + endpoint).handler(context -> read(context, endpoint, service));
      router.route("/" + endpoint).handler(AdmissionRoutes::onlyPost);
    }
  }

  /**
   * Gathers the body, held to the size limit also when it comes without a Content-Length (a
   * declared one over the limit was refused before, by {@link BodySizeLimit}).
   */
  private void read(RoutingContext context, String endpoint, Function<DecodedReview, AdmissionResponse> service) {
    var request = context.request();
    var body = new ReceivedBody(BodySizeLimit.declaredLength(context), bodyLimit);
    request.handler(chunk -> {
      if (!body.refused() && !body.append(chunk)) {
        BodySizeLimit.refuse(context, "request body is larger than the " + bodyLimit + "-byte limit");
      }
    });
    request.endHandler(end -> {
      if (!body.refused()) {
        answer(context, endpoint, service, body.bytes());
      }
    });
    if ("100-continue".equalsIgnoreCase(request.getHeader(HttpHeaders.EXPECT))) {
      // Clients that ask (curl does above 1 MiB) wait for this before they send the body.
      context.response().writeContinue();
    }
    request.resume();
  }

  /** Any other method on a review path: 405 naming the one that is served. */
  private static void onlyPost(RoutingContext context) {
    var body = StatusBody.of(405, "MethodNotAllowed",
        context.request().method() + " is not served here: kube-apiserver sends AdmissionReviews with POST");
    context.response().setStatusCode(405).putHeader(HttpHeaders.ALLOW, "POST")
        .putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(Buffer.buffer(body));
  }

  private void answer(
      RoutingContext context, String endpoint, Function<DecodedReview, AdmissionResponse> service, byte[] body) {
    var start = System.nanoTime();
    byte[] answer;
    try {
      answer = ReviewCodec.encode(service.apply(ReviewCodec.decode(body)));
    } catch (MalformedReviewException e) {
      metrics.record(endpoint, Outcome.MALFORMED, start);
      context.response().setStatusCode(400).putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(Buffer.buffer(StatusBody.of(400, "BadRequest", e.getMessage())));
      return;
    } catch (RuntimeException bug) {
      // The services answer every failure they expect; this is a bug. Quarkus' failure handler
      // logs it and answers 500, instead of leaving kube-apiserver waiting for its timeout.
      context.fail(bug);
      return;
    }
    context.response().putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(Buffer.buffer(answer));
  }
}
