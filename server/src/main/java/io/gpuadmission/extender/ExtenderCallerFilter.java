package io.gpuadmission.extender;

import io.gpuadmission.tls.CallerVerifier;
import io.gpuadmission.tls.TrustedCallers;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.SimpleResourceInfo;

/**
 * Lets only kube-scheduler reach {@link ExtenderResource} (every path it serves, the gpushare ones
 * included): the caller's TLS client certificate must satisfy {@link TrustedCallers}. Others get
 * 401 or 403 with the reason (counted in {@code gpu_admission_extender_refusals_total}), before the
 * request reaches any verb, so a refused bind, preempt or filter changes nothing.
 */
public class ExtenderCallerFilter {
  private final TrustedCallers callers;

  public ExtenderCallerFilter(TrustedCallers callers) {
    this.callers = callers;
  }

  // On the event loop, before a blocking verb (preempt, inspect) is handed to a worker thread.
  @ServerRequestFilter(nonBlocking = true)
  public Response check(SimpleResourceInfo resource, HttpServerRequest request) {
    if (resource.getResourceClass() != ExtenderResource.class || !callers.required()) {
      return null;
    }
    if (callers.check(peerChain(request)) instanceof CallerVerifier.Verdict.Refused refused) {
      return Response.status(refused.status())
          .type(MediaType.APPLICATION_JSON)
          .entity(ExtenderCodec.write(Map.of("Error", refused.reason())))
          .build();
    }
    return null; // a caller kube-scheduler's certificate vouches for: on to the verb
  }

  /** The client certificate chain of the connection (shared by every HTTP/2 stream on it). */
  private static List<X509Certificate> peerChain(HttpServerRequest request) {
    var session = request.sslSession();
    if (session == null) {
      return List.of();
    }
    try {
      return Arrays.stream(session.getPeerCertificates())
          .filter(X509Certificate.class::isInstance)
          .map(X509Certificate.class::cast)
          .toList();
    } catch (SSLPeerUnverifiedException none) {
      return List.of();
    }
  }
}
