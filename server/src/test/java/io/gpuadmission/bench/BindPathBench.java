package io.gpuadmission.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.gpuadmission.placement.BindRequest;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PodBinder;
import io.gpuadmission.policy.PolicyParser;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A whole bind as the leader makes it ({@link PodBinder}: GET the pod, choose and reserve, PATCH
 * the annotations, POST the Binding, assume), through fabric8's client over loopback HTTP to an
 * API server that answers at once with canned bodies and times its own handling. The figure is
 * the bind's time minus that handling: our work, the client's (serialization, HTTP) and the
 * loopback round trips, without the API server's. Ledger: NODES nodes of 8 V100s, GPU_PODS shares.
 *
 * <p>Usage: {@code BindPathBench NODES GPU_PODS ROUNDS}
 */
public final class BindPathBench {
  private static final String POD =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"share\",\"namespace\":\"bench\",\"uid\":\"uid-bind\"},"
          + "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"cuda\",\"resources\":{\"limits\":{\"aliyun.com/gpu-mem\":\"4\"}}}]}}";
  private static final String BINDING =
      "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"share\",\"namespace\":\"bench\"},"
          + "\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"n\"}}";

  private BindPathBench() {}

  public static void main(String[] args) throws IOException {
    var nodes = Integer.parseInt(args[0]);
    var gpuPods = Integer.parseInt(args[1]);
    var rounds = Integer.parseInt(args[2]);
    var apiNanos = new AtomicLong();
    // Without it the JDK server's header and body writes wait out the client's delayed ACK (40 ms).
    System.setProperty("sun.net.httpserver.nodelay", "true");
    var api = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    api.createContext("/", exchange -> answer(exchange, apiNanos));
    api.start();
    var policy = PolicyParser.builtInDefault();
    var ledger = BindDecisionBench.ledger(nodes, gpuPods);
    var config = new ConfigBuilder().withMasterUrl("http://127.0.0.1:" + api.getAddress().getPort()).withRequestRetryBackoffLimit(0).build();
    try (var client = new KubernetesClientBuilder().withConfig(config).build()) {
      var binder =
          new PodBinder(
              client, ledger, new PlacementDecider(ledger, () -> policy), LeaderGate.alone("bench"), () -> policy, Clock.systemUTC(), Duration.ofSeconds(30));
      var withoutApi = new long[rounds];
      var whole = new long[rounds];
      for (int r = -rounds; r < rounds; r++) {
        var node = BindDecisionBench.name(Math.floorMod(r * 7919, nodes));
        apiNanos.set(0);
        var start = System.nanoTime();
        var error = binder.bind(new BindRequest("bench", "share", "uid-bind", node));
        var took = System.nanoTime() - start;
        if (!error.isEmpty()) {
          throw new IllegalStateException(error);
        }
        ledger.unreserve("uid-bind");
        if (r >= 0) {
          whole[r] = took;
          withoutApi[r] = took - apiNanos.get();
        }
      }
      System.out.printf("nodes=%d gpuPods=%d rounds=%d bind without API server: %s; whole bind: %s%n", nodes, gpuPods, rounds, percentiles(withoutApi), percentiles(whole));
    } finally {
      api.stop(0);
    }
    System.exit(0); // the client's event-loop threads would keep the JVM up
  }

  private static void answer(HttpExchange exchange, AtomicLong apiNanos) throws IOException {
    var start = System.nanoTime();
    exchange.getRequestBody().readAllBytes();
    var binding = exchange.getRequestURI().getPath().endsWith("/bindings");
    var body = (binding ? BINDING : POD).getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(binding ? 201 : 200, body.length);
    try (var out = exchange.getResponseBody()) {
      out.write(body);
    }
    apiNanos.addAndGet(System.nanoTime() - start);
  }

  private static String percentiles(long[] nanos) {
    Arrays.sort(nanos);
    return String.format(
        "p50_ms=%.3f p99_ms=%.3f p99.9_ms=%.3f max_ms=%.3f",
        nanos[nanos.length / 2] / 1e6, nanos[(int) (nanos.length * 0.99)] / 1e6, nanos[(int) (nanos.length * 0.999)] / 1e6, nanos[nanos.length - 1] / 1e6);
  }
}
