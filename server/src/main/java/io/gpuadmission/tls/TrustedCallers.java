package io.gpuadmission.tls;

import io.gpuadmission.metrics.Meters;
import io.gpuadmission.mode.ServerStartup;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The client CAs whose certificates may call the extender, kept current: the file's (re-read when
 * its bytes change) or the self-managed Secret's ({@link #trust}, on every sync). A CA change is
 * whatever the source holds: during a rotation both CAs are in it, so the caller's old certificate
 * keeps working until the old CA leaves. Accepted leaves are remembered for a minute so that
 * kube-scheduler's calls, one TLS session for thousands of requests, do not each validate a chain.
 */
@ApplicationScoped
public class TrustedCallers {
  private static final Logger LOG = Logger.getLogger(TrustedCallers.class);
  private static final Duration REMEMBERED = Duration.ofMinutes(1);
  private static final int REMEMBERED_MAX = 64;

  private final CallerAuthConfig config;
  private final CertificateConfig tls;
  private final Clock clock;
  private final Map<X509Certificate, Instant> accepted = new ConcurrentHashMap<>();
  private volatile List<X509Certificate> cas = List.of();
  private volatile X509Certificate warmUpCa;
  private volatile CallerVerifier verifier;
  private volatile X509Certificate lastCaller;
  private final Map<String, Counter> refusals = new ConcurrentHashMap<>();
  private byte[] seenFile;
  private ScheduledExecutorService timer;

  public TrustedCallers(CallerAuthConfig config, CertificateConfig tls) {
    this.config = config;
    this.tls = tls;
    this.clock = Clock.systemUTC();
    this.verifier = new CallerVerifier(List.of(), config.names());
  }

  void start(@Observes ServerStartup event, MeterRegistry meters) {
    Meters.forget(meters, "gpu_admission_extender_caller_certificate_expiry_timestamp");
    Gauge.builder("gpu_admission_extender_caller_certificate_expiry_timestamp", this, TrustedCallers::callerNotAfter)
        .description("When the client certificate of the extender's last accepted caller expires (Unix time):"
            + " kube-scheduler reads it only at start, so restart it before then")
        .baseUnit("seconds")
        .strongReference(true)
        .register(meters);
    // Every reason from the start, so that alerts and dashboards find the series at 0.
    for (var kind : CallerVerifier.REFUSALS) {
      refusals.put(
          kind,
          Counter.builder("gpu_admission_extender_refusals")
              .description("Extender calls refused because the caller is not kube-scheduler (no, untrusted or wrong client certificate)")
              .tag("reason", kind)
              .register(meters));
    }
    if (!config.required()) {
      LOG.warn("gpu-admission.extender.caller.required is false: the extender (bind, preempt, filter, inspect)"
          + " answers anyone who reaches the port, without a client certificate. Fence it with a network policy");
      return;
    }
    var file = file();
    if (file == null) {
      return; // the self-managed Secret is the source: SelfManagedCertificates calls trust()
    }
    readFile(file);
    timer = Executors.newSingleThreadScheduledExecutor(r -> ServedCertificate.daemon(r, "client-ca-file"));
    var period = tls.checkPeriod().toMillis();
    timer.scheduleWithFixedDelay(() -> readFile(file), period, period, TimeUnit.MILLISECONDS);
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (timer != null) {
      timer.shutdownNow();
    }
  }

  /** True when the extender takes calls from trusted callers only. */
  public boolean required() {
    return config.required();
  }

  /** True when the self-managed Secret's CAs are the trusted client CAs (no file configured). */
  public boolean followsSecret() {
    return file() == null;
  }

  /** Judges a caller's chain (leaf first; empty when it presented none); counts refusals. */
  public CallerVerifier.Verdict check(List<X509Certificate> chain) {
    var now = clock.instant();
    if (!chain.isEmpty()) {
      var until = accepted.get(chain.get(0));
      if (until != null && now.isBefore(until)) {
        return new CallerVerifier.Verdict.Accepted(chain.get(0));
      }
    }
    var verdict = verifier.verify(chain, now);
    if (verdict instanceof CallerVerifier.Verdict.Refused refused) {
      var counter = refusals.get(refused.kind());
      if (counter != null) {
        counter.increment();
      }
    }
    if (verdict instanceof CallerVerifier.Verdict.Accepted(var leaf)) {
      if (accepted.size() >= REMEMBERED_MAX) {
        accepted.clear();
      }
      var notAfter = leaf.getNotAfter().toInstant();
      var remembered = now.plus(REMEMBERED);
      accepted.put(leaf, notAfter.isBefore(remembered) ? notAfter : remembered);
      if (warmUpCa == null || !leaf.getIssuerX500Principal().equals(warmUpCa.getSubjectX500Principal())) {
        lastCaller = leaf;
      }
    }
    return verdict;
  }

  /** Trusts exactly {@code trusted} from now on (the Secret's ca.crt, after each sync). */
  public synchronized void trust(List<X509Certificate> trusted) {
    if (trusted.equals(cas)) {
      return;
    }
    var before = cas;
    cas = List.copyOf(trusted);
    rebuild();
    if (!before.isEmpty()) {
      LOG.infof("trusted client CAs are now %s", subjects(cas));
    }
  }

  /**
   * A client certificate for this process's own warm-up requests to the extender, from a CA made
   * for it that only this process ever holds, trusted until {@link #endWarmUp()}.
   */
  public synchronized CertificateBundle warmUpCaller() {
    try {
      var now = clock.instant();
      var ca = CertificateIssuer.newCa("gpu-admission-warm-up-" + Long.toHexString(System.nanoTime()), now, Duration.ofHours(1));
      var name = config.names().stream().filter(n -> !n.equals("*")).findFirst().orElse("system:kube-scheduler");
      var caller = CertificateIssuer.client(ca, ca.caCertificates(), name, now, Duration.ofHours(1));
      warmUpCa = ca.signingCa();
      rebuild();
      return caller;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("could not make the warm-up client certificate", e);
    }
  }

  /** Stops trusting the warm-up CA: from here on only the configured CAs' callers are accepted. */
  public synchronized void endWarmUp() {
    if (warmUpCa != null) {
      warmUpCa = null;
      rebuild();
    }
  }

  private void rebuild() {
    var anchors = new ArrayList<>(cas);
    if (warmUpCa != null) {
      anchors.add(warmUpCa);
    }
    verifier = new CallerVerifier(anchors, config.names());
    accepted.clear();
  }

  private synchronized void readFile(Path file) {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      if (seenFile == null) {
        LOG.warnf("no client CA file at %s (%s): every extender call is refused until it exists", file.toAbsolutePath(), e);
        seenFile = new byte[0];
      }
      return;
    }
    if (Arrays.equals(bytes, seenFile)) {
      return;
    }
    seenFile = bytes;
    try {
      var read = Pem.readCertificates(new String(bytes, StandardCharsets.US_ASCII));
      trust(read);
      LOG.infof("extender callers: client certificates signed by %s from %s", subjects(read), file);
    } catch (GeneralSecurityException | RuntimeException e) {
      LOG.warnf("%s holds no readable CA certificate (%s); the client CAs trusted so far stay", file, e.getMessage());
    }
  }

  /** The configured file, or ca.crt beside the serving certificate; null when the Secret is the source. */
  private Path file() {
    if (config.caFile().isPresent()) {
      return config.caFile().get();
    }
    if (tls.selfManaged()) {
      return null;
    }
    var sibling = tls.certFile().resolveSibling("ca.crt");
    return sibling;
  }

  private static List<String> subjects(List<X509Certificate> certificates) {
    return certificates.stream().map(c -> c.getSubjectX500Principal().getName()).toList();
  }

  private double callerNotAfter() {
    var caller = lastCaller;
    return caller == null ? Double.NaN : caller.getNotAfter().getTime() / 1000.0;
  }
}
