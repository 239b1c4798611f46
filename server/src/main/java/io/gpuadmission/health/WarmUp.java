package io.gpuadmission.health;

import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.admission.MalformedReviewException;
import io.gpuadmission.admission.MutationService;
import io.gpuadmission.admission.ReviewCodec;
import io.gpuadmission.admission.ValidationService;
import io.gpuadmission.cluster.FirstSync;
import io.gpuadmission.extender.ExtenderMetrics;
import io.gpuadmission.extender.ExtenderWarmUp;
import io.gpuadmission.tls.TrustedCallers;
import io.quarkus.runtime.Quarkus;
import io.quarkus.vertx.http.HttpsServerStart;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.ObservesAsync;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Pushes sample requests of every endpoint through the real path before readiness turns green: the
 * first review on a cold JVM takes seconds (class loading, JIT, the first TLS handshake), longer
 * than the API server's webhook timeout. First in-process, then over HTTPS to this server's own
 * port. The build's AOT training run (src/main/jvm/train.sh) is this warm-up, made longer, after
 * which the server exits: what it loads and profiles is what the AOT cache holds.
 */
@ApplicationScoped
public class WarmUp {
  private static final Logger LOG = Logger.getLogger(WarmUp.class);
  static final List<String> MUTATE_SAMPLES =
      List.of("/warmup/gpu-topology.json", "/warmup/gpu-mem.json", "/warmup/cpu-only.json");
  /** Dry runs (a pod, a PyTorchJob, a Deployment): judged like any review, leaving nothing behind. */
  static final List<String> VALIDATE_SAMPLES =
      List.of(
          "/warmup/validate-pod-dry-run.json",
          "/warmup/validate-pytorchjob-dry-run.json",
          "/warmup/validate-deployment-dry-run.json");
  /**
   * The training run profiles the path for up to 1,500 rounds (9,000 reviews and 4,500 extender
   * calls) or 20 s, long enough for C2 to compile it, and sends the HTTPS samples fifty times; only
   * the build waits for it.
   */
  private static final Rounds TRAINING = new Rounds(1500, Duration.ofSeconds(20), 50);

  /**
   * In-process rounds (at most {@code count}, stopping after {@code budget}), then HTTPS rounds. At
   * a production start (gpu-admission.warm-up.budget, 300 ms) the first round matters most: it
   * builds Jackson's (de)serializers and runs every path once; the AOT cache already holds the
   * classes and the training run's profiles, and more rounds on one CPU only delay readiness
   * (bench/README.md: 1.5 s gave the first reviews no better latency). A native executable, compiled
   * ahead of time, has no JIT to warm and no classes to load: the HTTPS round alone initialises what
   * each path sets up on first use (in-process rounds before it only did the same work twice: Ready
   * at 1.2 s with one against 0.4 s without, the first review after it as fast).
   */
  private record Rounds(int count, Duration budget, int https) {}

  private final MutationService mutation;
  private final ValidationService validation;
  private final AdmissionMetrics metrics;
  private final ExtenderWarmUp extender;
  private final ExtenderMetrics extenderMetrics;
  private final TrustedCallers callers;
  private final Vertx vertx;
  private final FirstSync cluster;
  private final boolean training;
  private final Rounds production;
  private volatile State state = State.PENDING;
  private volatile String detail = "warming up: the HTTPS listener has not started yet";

  public WarmUp(
      MutationService mutation,
      ValidationService validation,
      AdmissionMetrics metrics,
      ExtenderWarmUp extender,
      ExtenderMetrics extenderMetrics,
      TrustedCallers callers,
      Vertx vertx,
      FirstSync cluster,
      @ConfigProperty(name = "gpu-admission.warm-up.training", defaultValue = "false") boolean training,
      @ConfigProperty(name = "gpu-admission.warm-up.budget", defaultValue = "300ms") Duration budget) {
    this.mutation = mutation;
    this.validation = validation;
    this.metrics = metrics;
    this.extender = extender;
    this.extenderMetrics = extenderMetrics;
    this.callers = callers;
    this.vertx = vertx;
    this.cluster = cluster;
    this.training = training;
    this.production = io.quarkus.runtime.ImageMode.current().isNativeImage() ? new Rounds(0, Duration.ZERO, 1) : new Rounds(200, budget, 1);
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
    var rounds = training ? TRAINING : production;
    try {
      // The samples go through the cluster's policy and nodes, as real reviews will, not the refusal before them.
      while (!cluster.done()) {
        detail = "warm-up waits for the cluster: " + cluster.waitingFor();
        Thread.sleep(100);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    var began = System.nanoTime();
    detail = "warming up: pushing sample requests through /mutate, /validate and the extender";
    var complete = false;
    try {
      var mutate = MUTATE_SAMPLES.stream().map(WarmUp::read).toList();
      var validate = VALIDATE_SAMPLES.stream().map(WarmUp::read).toList();
      var extenderArgs = ExtenderWarmUp.ARGS_SAMPLES.stream().map(WarmUp::read).toList();
      var bind = read(ExtenderWarmUp.BIND_SAMPLE);
      var budgetEnd = began + rounds.budget().toNanos();
      var done = 0;
      while (done < rounds.count() && System.nanoTime() < budgetEnd) {
        for (var sample : mutate) {
          ReviewCodec.encode(mutation.review(ReviewCodec.decode(sample)));
        }
        for (var sample : validate) {
          ReviewCodec.encode(validation.review(ReviewCodec.decode(sample)));
        }
        extender.round(extenderArgs, bind);
        done++;
      }
      var inProcessMs = (System.nanoTime() - began) / 1_000_000;
      var port = httpsPort(started);
      // The extender takes kube-scheduler's certificate only: warm-up presents one of its own, from
      // a CA that exists only in this process and is trusted only until warm-up ends.
      var caller = callers.required() ? callers.warmUpCaller() : null;
      try (var self = new SelfRequest(vertx, listenerAddress(started), port, caller)) {
        for (int i = 0; i < rounds.https(); i++) {
          self.post("/mutate", mutate);
          self.post("/validate", validate);
          // Bind is left out: it would ask the API server about a pod that does not exist.
          self.post("/extender/filter", extenderArgs);
          self.post("/extender/prioritize", extenderArgs);
        }
      }
      // A native executable has nothing to compile or load: its warm-up is the HTTPS round alone.
      detail = done == 0
          ? "HTTPS self-request on port " + port + " done"
          : "in-process and HTTPS self-request on port " + port + " done (in-process " + done + " rounds in " + inProcessMs + " ms)";
      complete = true;
    } catch (RuntimeException | IOException | MalformedReviewException e) {
      detail = "warm-up incomplete (" + e + "); serving anyway";
      LOG.warn(detail);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      detail = "warm-up interrupted";
    } finally {
      callers.endWarmUp();
    }
    metrics.startRecording();
    extenderMetrics.startRecording();
    state = State.DONE;
    LOG.infof("warm-up finished in %d ms: %s", (System.nanoTime() - began) / 1_000_000, detail);
    if (training) {
      // The JVM writes the AOT cache as it exits; a training run that did not finish fails the build.
      Quarkus.asyncExit(complete ? 0 : 1);
    }
  }

  /**
   * Where the listener accepts a connection from this process: the address it is bound to
   * ({@code quarkus.http.host}), or 127.0.0.1 when bound to every address (the default) or to
   * localhost (the default in tests).
   */
  private static String listenerAddress(HttpsServerStart started) {
    var host = started.options().getHost();
    return host == null || List.of("", "0.0.0.0", "::", "[::]", "localhost").contains(host) ? "127.0.0.1" : host;
  }

  /** The configured port, or the one the listener took when configured with 0 (the training run). */
  private static int httpsPort(HttpsServerStart started) {
    var configured = started.options().getPort();
    return configured > 0
        ? configured
        : ConfigProvider.getConfig().getValue("quarkus.http.ssl-port", Integer.class);
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
