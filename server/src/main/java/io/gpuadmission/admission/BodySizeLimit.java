package io.gpuadmission.admission;

import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import java.util.List;

/**
 * Holds every path but those of a {@link LargerBodyLimit} (the extender's) to 3 MiB, kube-apiserver's own
 * cap on a request: a larger body is refused with 413 and a Kubernetes Status saying why. A body
 * whose Content-Length is over the limit is refused here, before any of it is read; a chunked one
 * (no Content-Length) is read whole, up to {@code quarkus.http.limits.max-body-size} (the
 * extender's larger limit), and then refused by {@link AdmissionResource} with the same Status.
 */
@ApplicationScoped
public class BodySizeLimit {
  /** kube-apiserver's limit on a request body (apiserver's MaxRequestBodyBytes, 3 MiB). */
  static final long LIMIT = 3L * 1024 * 1024;

  private final List<LargerBodyLimit> larger;

  BodySizeLimit(Instance<LargerBodyLimit> larger) {
    this.larger = larger.stream().toList();
  }

  void install(@Observes Router router) {
    // Before every other route, so that no body handler has started reading.
    router.route().order(Integer.MIN_VALUE).handler(this::check);
  }

  private void check(RoutingContext context) {
    var path = context.normalizedPath();
    if (larger.stream().anyMatch(limit -> limit.holds(path))) {
      context.next();
      return;
    }
    var length = declaredLength(context);
    if (length > LIMIT) {
      RefusedBody.answer(context, 413, tooLarge("request body of " + length + " bytes"));
    } else {
      context.next();
    }
  }

  /** The 413 Status for {@code what} (a body), over the limit. */
  static byte[] tooLarge(String what) {
    return StatusBody.of(413, "RequestEntityTooLarge",
        what + " is larger than the " + LIMIT + "-byte limit; kube-apiserver never sends an AdmissionReview over 3 MiB");
  }

  /** The request's Content-Length, or -1 when it has none (chunked) or an unreadable one. */
  public static long declaredLength(RoutingContext context) {
    var declared = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    try {
      return declared == null ? -1 : Long.parseLong(declared.trim());
    } catch (NumberFormatException unreadable) {
      return -1;
    }
  }
}
