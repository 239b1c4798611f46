package io.gpuadmission.health;

import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.admission.MalformedReviewException;
import io.gpuadmission.admission.MutationService;
import io.gpuadmission.admission.ReviewCodec;
import io.gpuadmission.admission.ValidationService;
import io.quarkus.vertx.http.HttpsServerStart;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.ObservesAsync;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import org.jboss.logging.Logger;

/**
 * Pushes sample reviews through the real path before readiness turns green: the first review on a
 * cold JVM takes seconds (class loading, JIT, the first TLS handshake), longer than the API
 * server's webhook timeout. First in-process, then over HTTPS to this server's own port.
 */
@ApplicationScoped
public class WarmUp {
  private static final Logger LOG = Logger.getLogger(WarmUp.class);
  static final List<String> MUTATE_SAMPLES =
      List.of("/warmup/gpu-topology.json", "/warmup/gpu-mem.json", "/warmup/cpu-only.json");
  /** Dry runs: judged like any review, but they leave nothing in the gang ledger. */
  static final List<String> VALIDATE_SAMPLES =
      List.of("/warmup/validate-pod-dry-run.json", "/warmup/validate-pytorchjob-dry-run.json");
  private static final int IN_PROCESS_ROUNDS = 200;
  /**
   * Enough for the hot methods to reach compiled code (C1) on one CPU; past it the rounds only
   * delay readiness, and the JIT finishes the job with the first real reviews.
   */
  private static final Duration IN_PROCESS_BUDGET = Duration.ofMillis(1500);
  private static final Duration SELF_REQUEST_DEADLINE = Duration.ofSeconds(30);

  private final MutationService mutation;
  private final ValidationService validation;
  private final AdmissionMetrics metrics;
  private volatile State state = State.PENDING;
  private volatile String detail = "warming up: the HTTPS listener has not started yet";

  public WarmUp(MutationService mutation, ValidationService validation, AdmissionMetrics metrics) {
    this.mutation = mutation;
    this.validation = validation;
    this.metrics = metrics;
  }

  /** Where warm-up stands, for the readiness check. */
  public enum State {
    PENDING,
    DONE
  }

  public State state() {
    return state;
  }

  public String detail() {
    return detail;
  }

  void onHttpsStarted(@ObservesAsync HttpsServerStart started) {
    var began = System.nanoTime();
    detail = "warming up: pushing sample reviews through /mutate and /validate";
    try {
      var mutate = MUTATE_SAMPLES.stream().map(WarmUp::read).toList();
      var validate = VALIDATE_SAMPLES.stream().map(WarmUp::read).toList();
      var budgetEnd = began + IN_PROCESS_BUDGET.toNanos();
      for (int i = 0; i < IN_PROCESS_ROUNDS && System.nanoTime() < budgetEnd; i++) {
        for (var sample : mutate) {
          ReviewCodec.encode(mutation.review(ReviewCodec.decode(sample)));
        }
        for (var sample : validate) {
          ReviewCodec.encode(validation.review(ReviewCodec.decode(sample)));
        }
      }
      var inProcessMs = (System.nanoTime() - began) / 1_000_000;
      var port = started.options().getPort();
      selfRequest(port, "/mutate", mutate);
      selfRequest(port, "/validate", validate);
      detail = "in-process and HTTPS self-request on port " + port + " done (in-process " + inProcessMs + " ms)";
    } catch (RuntimeException | IOException | GeneralSecurityException | MalformedReviewException e) {
      detail = "warm-up incomplete (" + e + "); serving anyway";
      LOG.warn(detail);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      detail = "warm-up interrupted";
    }
    metrics.startRecording();
    state = State.DONE;
    LOG.infof("warm-up finished in %d ms: %s", (System.nanoTime() - began) / 1_000_000, detail);
  }

  /** POSTs the samples to our own endpoint; retries while the listener is not yet accepting. */
  private static void selfRequest(int port, String path, List<byte[]> samples)
      throws IOException, InterruptedException, GeneralSecurityException {
    var client =
        HttpClient.newBuilder().sslContext(trustingLoopback()).connectTimeout(Duration.ofSeconds(2)).build();
    var deadline = System.nanoTime() + SELF_REQUEST_DEADLINE.toNanos();
    var uri = URI.create("https://127.0.0.1:" + port + path);
    IOException last = null;
    while (System.nanoTime() < deadline) {
      try {
        for (var sample : samples) {
          var response =
              client.send(
                  HttpRequest.newBuilder(uri)
                      .timeout(Duration.ofSeconds(10))
                      .header("Content-Type", "application/json")
                      .POST(HttpRequest.BodyPublishers.ofByteArray(sample))
                      .build(),
                  HttpResponse.BodyHandlers.discarding());
          if (response.statusCode() != 200) {
            throw new IOException("self-request to " + uri + " answered HTTP " + response.statusCode());
          }
        }
        return;
      } catch (IOException e) {
        last = e;
        Thread.sleep(200);
      }
    }
    throw last == null ? new IOException("no attempt made") : last;
  }

  /**
   * The self-request goes to 127.0.0.1, which the serving certificate (cert-manager's, say) need
   * not name; it proves nothing about trust, it only warms the TLS and HTTP path.
   */
  private static SSLContext trustingLoopback() throws GeneralSecurityException {
    var context = SSLContext.getInstance("TLS");
    context.init(null, new javax.net.ssl.TrustManager[] {new LoopbackTrust()}, null);
    return context;
  }

  private static byte[] read(String resource) {
    try (InputStream in = WarmUp.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("warm-up sample " + resource + " is missing");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static final class LoopbackTrust extends X509ExtendedTrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, java.net.Socket socket) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, java.net.Socket socket) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
