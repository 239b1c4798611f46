package io.gpuadmission.admission;

import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Refuses a body larger than {@code quarkus.http.limits.max-body-size} with 413 and a Kubernetes
 * Status saying why, before any of it is read, and closes the connection (the server speaks
 * HTTP/1.1 only). kube-apiserver caps its own requests at 3 MiB, so anything larger is not from
 * it. Quarkus enforces the same limit on bodies sent without a Content-Length, while reading them
 * (its 413 has no reason body).
 */
@ApplicationScoped
public class BodySizeLimit {
  private static final long LINGER_MILLIS = 1000;
  private final long limit;

  public BodySizeLimit(@ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize limit) {
    this.limit = limit.asLongValue();
  }

  void install(@Observes Router router) {
    // Before every other route, so that no body handler has started reading.
    router.route().order(Integer.MIN_VALUE).handler(this::check);
  }

  private void check(RoutingContext context) {
    var length = declaredLength(context);
    if (length <= limit) {
      context.next();
      return;
    }
    refuse(context, "request body of " + length + " bytes is larger than the " + limit + "-byte limit");
  }

  /** The request's Content-Length, or -1 when it has none (chunked) or an unreadable one. */
  private static long declaredLength(RoutingContext context) {
    var declared = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    try {
      return declared == null ? -1 : Long.parseLong(declared.trim());
    } catch (NumberFormatException unreadable) {
      return -1;
    }
  }

  /**
   * Answers 413 with a Status that says {@code what}, and ends the exchange: the rest of the body is
   * not read.
   */
  private static void refuse(RoutingContext context, String what) {
    var path = context.request().path();
    var sender = path != null && (path.startsWith("/extender") || path.startsWith("/gpushare-scheduler"))
        ? "kube-scheduler never sends an extender request"
        : "kube-apiserver never sends an AdmissionReview";
    var body = StatusBody.of(413, "RequestEntityTooLarge", what + "; " + sender + " over 3 MiB");
    var response = context.response().setStatusCode(413).putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
    response.putHeader(HttpHeaders.CONNECTION, "close").end(Buffer.buffer(body)).onComplete(done -> lingeringClose(context));
  }

  /**
   * Closes an HTTP/1.1 connection whose body was refused unread, as nginx's lingering close does: a
   * socket closed with bytes still unread sends a reset, which can reach the client before the 413
   * and lose it. So what the client is still sending is read and dropped until it stops, for at
   * most a second, and only then is the connection closed.
   */
  private static void lingeringClose(RoutingContext context) {
    var request = context.request();
    var connection = request.connection();
    var timer = context.vertx().setTimer(LINGER_MILLIS, fired -> connection.close());
    try {
      request.handler(dropped -> {}).endHandler(ended -> {
        context.vertx().cancelTimer(timer);
        connection.close();
      });
      request.resume();
    } catch (IllegalStateException alreadyRead) {
      context.vertx().cancelTimer(timer);
      connection.close();
    }
  }
}
