package io.gpuadmission.admission;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Answers the requests Vert.x Web fails before any route runs, for want of a Host: a client
 * speaking HTTP/2 with prior knowledge (its {@code PRI * HTTP/2.0} preface reaches this HTTP/1.1
 * server as a request line) and an HTTP/1.1 request without a Host header. Left to Quarkus' error
 * handler, each logged an ERROR with an error id and answered a stack trace: they are a client's
 * mistake, answered with a Status saying so and nothing logged.
 */
@ApplicationScoped
public class UnroutableRequests {

  void install(@Observes Router router) {
    router.route().order(Integer.MIN_VALUE).failureHandler(this::answer);
  }

  private void answer(RoutingContext context) {
    var request = context.request();
    if (context.statusCode() != 400 || request.authority() != null) {
      context.next();
      return;
    }
    var response = context.response().putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
    if (request.version() == null) {
      // Not HTTP/1.x: the rest of the connection is frames this server does not read.
      var body = StatusBody.of(505, "HTTPVersionNotSupported",
          "this server speaks HTTP/1.1 only (ALPN http/1.1), not HTTP/2 with prior knowledge; see docs/operations.md#failover");
      response.setStatusCode(505).putHeader(HttpHeaders.CONNECTION, "close").end(Buffer.buffer(body))
          .onComplete(done -> request.connection().close());
      return;
    }
    response.setStatusCode(400).end(Buffer.buffer(StatusBody.of(400, "BadRequest", "an HTTP/1.1 request needs a Host header")));
  }
}
