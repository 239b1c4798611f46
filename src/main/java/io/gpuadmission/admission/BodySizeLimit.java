package io.gpuadmission.admission;

import io.fabric8.kubernetes.api.model.Status;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Refuses a body larger than {@code quarkus.http.limits.max-body-size} with 413 and a Kubernetes
 * Status saying why, before any of it is read, and closes the connection. kube-apiserver caps its
 * own requests at 3 MiB, so anything larger is not from it. A body sent without a Content-Length
 * is held to the same limit while it is read: by {@link AdmissionRoutes} for reviews, with the same
 * answer, and by Quarkus for the other endpoints (its 413 has no reason body).
 */
@ApplicationScoped
public class BodySizeLimit {
  private final long limit;

  public BodySizeLimit(@ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize limit) {
    this.limit = limit.asLongValue();
  }

  void install(@Observes Router router) {
    // Before every other route, so that no body handler has started reading.
    router.route().order(Integer.MIN_VALUE).handler(this::check);
  }

  private void check(RoutingContext context) {
    var declared = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    long length;
    try {
      length = declared == null ? -1 : Long.parseLong(declared.trim());
    } catch (NumberFormatException unreadable) {
      length = -1;
    }
    if (length <= limit) {
      context.next();
      return;
    }
    refuse(context, "request body of " + length + " bytes is larger than the " + limit + "-byte limit");
  }

  /**
   * Answers 413 with a Status that says {@code what}, and ends the exchange: the rest of the body is
   * not read.
   */
  static void refuse(RoutingContext context, String what) {
    var status = new Status();
    status.setStatus("Failure");
    status.setCode(413);
    status.setReason("RequestEntityTooLarge");
    status.setMessage(what + "; kube-apiserver never sends an AdmissionReview over 3 MiB");
    byte[] body;
    try {
      body = KubernetesJson.mapper().writeValueAsBytes(status);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("a Status always serializes", e);
    }
    var response = context.response().setStatusCode(413).putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
    if (context.request().version() == HttpVersion.HTTP_2) {
      // One stream of a shared connection: answer it and reset it, leave the others running.
      response.end(Buffer.buffer(body)).onComplete(done -> response.reset());
    } else {
      response.putHeader(HttpHeaders.CONNECTION, "close").end(Buffer.buffer(body))
          .onComplete(done -> context.request().connection().close());
    }
  }
}
