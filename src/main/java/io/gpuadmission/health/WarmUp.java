package io.gpuadmission.health;

import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.admission.MalformedReviewException;
import io.gpuadmission.admission.MutationService;
import io.gpuadmission.admission.ReviewCodec;
import io.gpuadmission.admission.ValidationService;
import io.quarkus.vertx.http.HttpsServerStart;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.ObservesAsync;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
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

  private final MutationService mutation;
  private final ValidationService validation;
  private final AdmissionMetrics metrics;
  private final Vertx vertx;
  private volatile State state = State.PENDING;
  private volatile String detail = "warming up: the HTTPS listener has not started yet";

  public WarmUp(
      MutationService mutation, ValidationService validation, AdmissionMetrics metrics, Vertx vertx) {
    this.mutation = mutation;
    this.validation = validation;
    this.metrics = metrics;
    this.vertx = vertx;
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
      try (var self = new SelfRequest(vertx, port)) {
        self.post("/mutate", mutate);
        self.post("/validate", validate);
      }
      detail = "in-process and HTTPS self-request on port " + port + " done (in-process " + inProcessMs + " ms)";
    } catch (RuntimeException | IOException | MalformedReviewException e) {
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
}
