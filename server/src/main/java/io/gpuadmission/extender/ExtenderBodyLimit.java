package io.gpuadmission.extender;

import io.gpuadmission.admission.BodySizeLimit;
import io.gpuadmission.admission.LargerBodyLimit;
import io.gpuadmission.admission.RefusedBody;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Holds the extender's paths to {@code gpu-admission.extender.max-body-size}. kube-scheduler puts
 * no cap on what it sends: with {@code nodeCacheCapable: false} a filter carries every feasible
 * Node whole (up to 50 images each, kubelet's nodeStatusMaxImages), so the limit is sized for
 * 5,000 such nodes, not for kube-apiserver's 3 MiB. A body declared larger is refused unread, with
 * an answer kube-scheduler logs: filter and bind get their result with {@code Error} set (HTTP
 * 200, since kube-scheduler reads no body of another status); prioritize and preempt, whose results
 * have no Error field, get 413 with {@code {"Error": ...}}. A chunked body is counted as it comes and
 * refused alike at the first byte over the limit. Each refusal is counted
 * ({@code outcome="too_large"}) and logged, at most one WARN line a minute.
 */
@ApplicationScoped
public class ExtenderBodyLimit implements LargerBodyLimit {
  private static final Logger LOG = Logger.getLogger(ExtenderBodyLimit.class);
  private static final long WARN_EVERY_NANOS = 60_000_000_000L;

  private final long limit;
  private final ExtenderMetrics metrics;
  private final AtomicLong lastWarned = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong unlogged = new AtomicLong();

  public ExtenderBodyLimit(@ConfigProperty(name = "gpu-admission.extender.max-body-size") MemorySize limit, ExtenderMetrics metrics) {
    this.limit = limit.asLongValue();
    this.metrics = metrics;
  }

  /** Whether {@code path} is one of the extender's (its limit, not the admission paths' 3 MiB). */
  public static boolean covers(String path) {
    return path != null
        && (path.equals("/extender") || path.startsWith("/extender/")
            || path.equals("/gpushare-scheduler") || path.startsWith("/gpushare-scheduler/"));
  }

  @Override
  public boolean holds(String path) {
    return covers(path);
  }

  void install(@Observes Router router) {
    // Before every other route, so that no body handler has started reading.
    router.route().order(Integer.MIN_VALUE).handler(this::check);
  }

  private void check(RoutingContext context) {
    var path = context.normalizedPath();
    if (!covers(path)) {
      context.next();
      return;
    }
    var verb = path.substring(path.lastIndexOf('/') + 1);
    var length = BodySizeLimit.declaredLength(context);
    if (length > limit) {
      refuse(context, verb, "request body of " + length + " bytes");
    } else if (length < 0 && context.request().headers().contains(HttpHeaders.TRANSFER_ENCODING) && !context.request().isEnded()) {
      readChunked(context, verb);
    } else {
      context.next();
    }
  }

  /**
   * A chunked body (no Content-Length) is read here, counted as it comes: over the limit it is
   * refused as a declared one is, at the first byte too many; within it, it is handed to the
   * endpoint ({@link ChunkedBodyFilter}). Left to the HTTP server, it would get the server's own
   * bare 413 at its limit, which is the same number, and go uncounted.
   */
  private void readChunked(RoutingContext context, String verb) {
    var request = context.request();
    var body = Buffer.buffer();
    var refused = new boolean[1];
    request.handler(chunk -> {
      if (refused[0]) {
        return;
      }
      if ((long) body.length() + chunk.length() > limit) {
        refused[0] = true;
        refuse(context, verb, "chunked request body of more than " + limit + " bytes");
        return;
      }
      body.appendBuffer(chunk);
    });
    request.endHandler(ended -> {
      if (!refused[0]) {
        context.put(ChunkedBodyFilter.BODY, body);
        context.next();
      }
    });
    request.resume();
  }

  private void refuse(RoutingContext context, String verb, String what) {
    var message = what + " is larger than the extender's " + limit
        + "-byte limit (gpu-admission.extender.max-body-size): with nodeCacheCapable: false kube-scheduler sends every"
        + " feasible Node whole; set nodeCacheCapable: true in its extender configuration (it then sends node names only),"
        + " or raise the limit together with the Deployment's memory limit";
    metrics.record(verb, "too_large");
    warn(verb, message);
    switch (verb) {
      case "filter" -> RefusedBody.answer(context, 200, ExtenderCodec.write(new ExtenderWire.FilterResult(null, null, Map.of(), Map.of(), message)));
      case "bind" -> RefusedBody.answer(context, 200, ExtenderCodec.write(new ExtenderWire.BindingResult(message)));
      default -> RefusedBody.answer(context, 413, ExtenderCodec.write(Map.of("Error", message)));
    }
  }

  /** One line a minute at most, saying how many were refused since the last. */
  private void warn(String verb, String message) {
    var now = System.nanoTime();
    var last = lastWarned.get();
    if ((last == Long.MIN_VALUE || now - last > WARN_EVERY_NANOS) && lastWarned.compareAndSet(last, now)) {
      var before = unlogged.getAndSet(0);
      LOG.warnf("extender %s refused: %s%s", verb, message, before == 0 ? "" : " (" + before + " more refused since the last such line)");
    } else {
      unlogged.incrementAndGet();
    }
  }
}
