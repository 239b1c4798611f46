package io.gpuadmission.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Soak: the packaged webhook watching a mock cluster that keeps changing, under mixed reviews at a
 * fixed rate. Latency counts from when each request was due (no coordinated omission). Prints, per
 * window, requests, errors (not 200, timed out, or uid not echoed), p50/p99/max, and the
 * webhook's RSS and threads. Not a test: run it with bench/soak.sh.
 *
 * <p>Usage: {@code Soak --minutes 30 --rate 200 --window-minutes 5 --warmup-seconds 30 --port 8443
 * --jar server/target/quarkus-app/quarkus-run.jar}
 */
public final class Soak {
  private static final int MAX_MINUTES = 180;
  private static final int MAX_RATE = 1000;

  private Soak() {}

  public static void main(String[] args) throws Exception {
    var minutes = Double.parseDouble(arg(args, "--minutes", "30"));
    var rate = Integer.parseInt(arg(args, "--rate", "200"));
    var windowMinutes = Double.parseDouble(arg(args, "--window-minutes", "5"));
    var warmupSeconds = Integer.parseInt(arg(args, "--warmup-seconds", "30"));
    var port = Integer.parseInt(arg(args, "--port", System.getenv().getOrDefault("QUARKUS_HTTP_SSL_PORT", "8443")));
    var jar = Path.of(arg(args, "--jar", "server/target/quarkus-app/quarkus-run.jar"));
    if (minutes <= 0 || minutes > MAX_MINUTES || rate <= 0 || rate > MAX_RATE || windowMinutes <= 0) {
      throw new IllegalArgumentException("--minutes in (0, " + MAX_MINUTES + "], --rate in (0, " + MAX_RATE + "], --window-minutes > 0");
    }
    var reviews = reviews();
    try (var cluster = new SoakCluster()) {
      var log = Path.of("server/target/soak/webhook.log");
      Files.createDirectories(log.getParent());
      var webhook = new ProcessBuilder("java", "-Xmx256m", "-XX:+UseSerialGC",
          "-Dquarkus.kubernetes-client.api-server-url=" + cluster.url(), "-Dquarkus.http.ssl-port=" + port,
          "-Dquarkus.log.category.\"io.fabric8\".level=WARN", "-jar", jar.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      try {
        run(webhook, cluster, reviews, port, minutes, rate, windowMinutes, warmupSeconds);
      } finally {
        webhook.destroy();
        webhook.waitFor(20, TimeUnit.SECONDS);
      }
    }
    // The HTTP client's and the mock server's threads would keep the JVM up after the report.
    System.exit(0);
  }

  private static void run(Process webhook, SoakCluster cluster, List<Review> reviews, int port, double minutes, int rate,
      double windowMinutes, int warmupSeconds) throws Exception {
    var client = HttpClient.newBuilder().sslContext(io.gpuadmission.support.TrustAnything.context()).connectTimeout(Duration.ofSeconds(5))
        .executor(Executors.newFixedThreadPool(4)).build();
    var base = "https://127.0.0.1:" + port;
    awaitReady(client, base);
    var pid = webhook.pid();
    warmUp(client, base, reviews, rate, warmupSeconds);
    System.out.printf("soak: %.1f min at %d/s, windows of %.1f min, %d distinct reviews, webhook pid %d, mock API server %s%n",
        minutes, rate, windowMinutes, reviews.size(), pid, cluster.url());
    System.out.printf("start: rss=%s threads=%s%n", status(pid, "VmRSS"), status(pid, "Threads"));
    System.out.printf("%-8s %8s %6s %8s %8s %8s %10s %8s %8s%n",
        "window", "requests", "errors", "p50 ms", "p99 ms", "max ms", "changes", "rss", "threads");

    var scheduler = Executors.newScheduledThreadPool(2);
    var sent = new AtomicLong();
    var latencies = new ConcurrentLinkedQueue<Long>();
    var errors = new AtomicLong();
    var firstErrors = new ConcurrentLinkedQueue<String>();
    var periodNanos = 1_000_000_000L / rate;
    var start = System.nanoTime();
    var load = scheduler.scheduleAtFixedRate(() -> {
      var n = sent.getAndIncrement();
      var due = start + n * periodNanos;
      var review = reviews.get((int) (n % reviews.size()));
      var uid = "soak-" + n;
      var request = HttpRequest.newBuilder(URI.create(base + review.path())).timeout(Duration.ofSeconds(10))
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(review.withUid(uid))).build();
      client.sendAsync(request, HttpResponse.BodyHandlers.ofString()).whenComplete((response, failure) -> {
        latencies.add(System.nanoTime() - due);
        if (failure != null || response.statusCode() != 200 || !response.body().contains("\"uid\":\"" + uid + "\"")) {
          errors.incrementAndGet();
          if (firstErrors.size() < 5) {
            firstErrors.add(failure != null ? failure.toString() : response.statusCode() + " " + response.body());
          }
        }
      });
    }, 0, periodNanos, TimeUnit.NANOSECONDS);
    var churn = scheduler.scheduleWithFixedDelay(() -> {
      try {
        cluster.change();
      } catch (RuntimeException e) {
        System.out.println("cluster change failed: " + e);
      }
    }, 100, 100, TimeUnit.MILLISECONDS);

    var windowNanos = (long) (windowMinutes * 60e9);
    var end = start + (long) (minutes * 60e9);
    var totalErrors = 0L;
    var totalRequests = 0L;
    var window = 0;
    while (System.nanoTime() < end) {
      var windowEnd = Math.min(end, start + (window + 1) * windowNanos);
      Thread.sleep(Math.max(0, (windowEnd - System.nanoTime()) / 1_000_000));
      var sample = drain(latencies);
      var windowErrors = errors.getAndSet(0);
      totalErrors += windowErrors;
      totalRequests += sample.length;
      System.out.printf("%-8s %8d %6d %8.1f %8.1f %8.1f %10d %8s %8s%n", ++window + "", sample.length, windowErrors,
          percentile(sample, 0.50), percentile(sample, 0.99), percentile(sample, 1.0), cluster.changes(),
          status(pid, "VmRSS"), status(pid, "Threads"));
    }
    load.cancel(false);
    churn.cancel(false);
    Thread.sleep(2000);
    var tail = drain(latencies);
    totalRequests += tail.length;
    totalErrors += errors.get();
    scheduler.shutdownNow();
    System.out.printf("end: rss=%s threads=%s%n", status(pid, "VmRSS"), status(pid, "Threads"));
    System.out.printf("total: %d requests, %d errors, %d cluster changes, %s%n", totalRequests, totalErrors, cluster.changes(), Instant.now());
    firstErrors.forEach(e -> System.out.println("error: " + e));
  }

  /** The same traffic, unmeasured, so that the first window measures a warm client and server. */
  private static void warmUp(HttpClient client, String base, List<Review> reviews, int rate, int seconds) throws Exception {
    var requests = (long) rate * seconds;
    var pause = 1_000_000_000L / rate;
    for (long n = 0; n < requests; n++) {
      var review = reviews.get((int) (n % reviews.size()));
      client.sendAsync(HttpRequest.newBuilder(URI.create(base + review.path())).timeout(Duration.ofSeconds(10))
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(review.withUid("warm-" + n))).build(),
          HttpResponse.BodyHandlers.discarding());
      java.util.concurrent.locks.LockSupport.parkNanos(pause);
    }
    Thread.sleep(2000);
  }

  private static long[] drain(ConcurrentLinkedQueue<Long> queue) {
    var out = new ArrayList<Long>();
    for (Long value; (value = queue.poll()) != null; ) {
      out.add(value);
    }
    return out.stream().mapToLong(Long::longValue).sorted().toArray();
  }

  private static double percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    var index = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))] / 1e6;
  }

  /** A field of /proc/PID/status, e.g. VmRSS or Threads. */
  private static String status(long pid, String field) {
    try {
      for (var line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith(field + ":")) {
          return line.substring(field.length() + 1).trim().replace(" kB", "k");
        }
      }
    } catch (IOException gone) {
      return "?";
    }
    return "?";
  }

  private static void awaitReady(HttpClient client, String base) throws Exception {
    var deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      try {
        var response = client.send(HttpRequest.newBuilder(URI.create(base + "/q/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() == 200 && response.body().contains("\"connected\": true")) {
          return;
        }
      } catch (IOException notYet) {
        // the listener is not up yet
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException("webhook not ready with its informers connected within 90 s (see server/target/soak/webhook.log)");
  }

  /** A review and the endpoint it goes to; the uid is replaced for each request. */
  record Review(String path, ObjectNode tree) {
    String withUid(String uid) {
      var copy = tree.deepCopy();
      ((ObjectNode) copy.path("request")).put("uid", uid);
      return copy.toString();
    }
  }

  /** Every pod fixture to /mutate and /validate, every workload and stored review to /validate. */
  private static List<Review> reviews() throws IOException {
    var out = new ArrayList<Review>();
    try (var files = Files.walk(Fixtures.path("mutation"))) {
      for (var file : files.filter(f -> f.getFileName().toString().equals("pod.yaml")).sorted().toList()) {
        var review = tree(Reviews.create("x", Fixtures.yamlTree(file)));
        out.add(new Review("/mutate", review));
        out.add(new Review("/validate", tree(Reviews.of("x", "CREATE", review.path("request").path("object"), true))));
      }
    }
    try (var files = Files.walk(Fixtures.path("workloads"))) {
      for (var file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        out.add(new Review("/validate", tree(Reviews.create("x", Fixtures.yamlTree(file)))));
      }
    }
    return out;
  }

  private static ObjectNode tree(String json) throws IOException {
    JsonNode node = KubernetesJson.mapper().readTree(json);
    return (ObjectNode) node;
  }

  private static String arg(String[] args, String name, String fallback) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals(name)) {
        return args[i + 1];
      }
    }
    return fallback;
  }
}
