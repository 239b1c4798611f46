package io.gpuadmission.extender;

import io.netty.buffer.ByteBufInputStream;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.container.ContainerRequestContext;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Hands an extender endpoint the chunked body {@link ExtenderBodyLimit} read while counting it: the
 * request has ended by then, so the REST layer, which reads bodies off the request, would find none.
 */
public class ChunkedBodyFilter {
  /** Where ExtenderBodyLimit leaves the body it read, in the request's routing context. */
  static final String BODY = "gpu-admission.extender.chunked-body";

  @ServerRequestFilter(preMatching = true, nonBlocking = true)
  public void body(ContainerRequestContext request, RoutingContext routing) {
    if (routing.get(BODY) instanceof Buffer body) {
      request.setEntityStream(new ByteBufInputStream(body.getByteBuf(), true));
    }
  }
}
