package io.gpuadmission.admission;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

/**
 * Answers a request whose body is refused unread (too large) and ends the exchange: the rest of the
 * body is never read, and the connection is closed after the answer (the server speaks HTTP/1.1
 * only, so nothing else shares it).
 */
public final class RefusedBody {
  private static final long LINGER_MILLIS = 1000;

  private RefusedBody() {}

  /** Sends {@code json} with {@code status}, then closes the connection. */
  public static void answer(RoutingContext context, int status, byte[] json) {
    var response = context.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json");
    response.putHeader(HttpHeaders.CONNECTION, "close").end(Buffer.buffer(json)).onComplete(done -> lingeringClose(context));
  }

  /**
   * Closes an HTTP/1.1 connection whose body was refused unread, as nginx's lingering close does: a
   * socket closed with bytes still unread sends a reset, which can reach the client before the
   * answer and lose it. So what the client is still sending is read and dropped until it stops, for
   * at most a second, and only then is the connection closed.
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
