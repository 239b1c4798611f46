package io.gpuadmission.tls;

import io.gpuadmission.mode.ServerStartup;
import io.gpuadmission.metrics.Meters;
import io.gpuadmission.mode.RunMode;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.tls.runtime.KeyStoreAndKeyCertOptions;
import io.quarkus.tls.runtime.KeyStoreProvider;
import io.vertx.core.Vertx;
import io.vertx.core.net.KeyCertOptions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The certificate the HTTPS listener serves. The TLS registry takes its key material from here (the
 * default TLS configuration has no key store of its own), as a key manager that is asked on every
 * handshake. It serves the PEM files, re-read only when their bytes change (the registry's
 * reload-period would rebuild a PKCS#12 store with PBKDF2 on every tick), or, with self-managed
 * certificates, what {@link SelfManagedCertificates} installs from the Secret.
 */
@ApplicationScoped
public class ServedCertificate implements KeyStoreProvider {
  private static final Logger LOG = Logger.getLogger(ServedCertificate.class);

  private final CertificateConfig config;
  private final RunMode mode;
  private final DynamicKeyManager keyManager = new DynamicKeyManager();
  private ScheduledExecutorService timer;
  private byte[] seenCert;
  private byte[] seenKey;
  private byte[] rejectedCert;
  private byte[] rejectedKey;
  private String rejection;
  private volatile X509Certificate served;

  public ServedCertificate(CertificateConfig config, @ConfigProperty(name = RunMode.PROPERTY) RunMode mode) {
    this.config = config;
    this.mode = mode;
  }

  /**
   * Called by the TLS registry when it sets up the default configuration, before the listener
   * starts. Outside server mode there is no listener: nothing is read or made, and the key
   * manager stays empty.
   */
  @Override
  public synchronized KeyStoreAndKeyCertOptions getKeyStore(Vertx vertx) {
    if (!mode.servesWebhook()) {
      return keyStore();
    }
    if (served == null && !config.selfManaged()) {
      serveFiles();
    } else if (served == null) {
      serveBootstrap();
    }
    return keyStore();
  }

  /** An empty store: the key material is the key manager's, asked on every handshake. */
  private KeyStoreAndKeyCertOptions keyStore() {
    try {
      var empty = KeyStore.getInstance("PKCS12");
      empty.load(null, null);
      return new KeyStoreAndKeyCertOptions(empty, KeyCertOptions.wrap(keyManager));
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("could not create an in-memory key store", e);
    }
  }

  void start(@Observes ServerStartup event, MeterRegistry meters) {
    Meters.forget(meters, "gpu_admission_certificate_expiry_timestamp");
    Gauge.builder(
            "gpu_admission_certificate_expiry_timestamp", this, ServedCertificate::notAfterSeconds)
        .description("When the serving certificate expires (Unix time)")
        .baseUnit("seconds")
        // Micrometer holds the state weakly by default; the bean lives as long as the app anyway.
        .strongReference(true)
        .register(meters);
    if (config.selfManaged()) {
      return; // the Secret is the only source; there are no files to watch
    }
    timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "certificate-files"));
    var period = config.checkPeriod().toMillis();
    timer.scheduleWithFixedDelay(this::checkQuietly, period, period, TimeUnit.MILLISECONDS);
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (timer != null) {
      timer.shutdownNow();
    }
  }

  /** The certificate new connections get. */
  public X509Certificate served() {
    return served;
  }

  /**
   * Serves {@code bundle}'s certificate from the next handshake on; false if it is served already.
   */
  public synchronized boolean install(CertificateBundle bundle) {
    if (bundle.certificate().equals(served)) {
      return false;
    }
    serve(bundle.key(), new X509Certificate[] {bundle.certificate()});
    return true;
  }

  /** Serves the files if they changed since last read and hold a matching pair; true if so. */
  public synchronized boolean check() {
    var cert = readOrEmpty(config.certFile());
    var key = readOrEmpty(config.keyFile());
    if (Arrays.equals(cert, seenCert) && Arrays.equals(key, seenKey)) {
      return false;
    }
    try {
      var pair = parse(cert, key);
      seenCert = cert;
      seenKey = key;
      serve(pair.key(), pair.chain());
      return true;
    } catch (GeneralSecurityException e) {
      // Not remembered as seen: a half-written pair is read again on the next check. Said once
      // per content, not every check period.
      rejection = e.getMessage();
      if (served != null && (!Arrays.equals(cert, rejectedCert) || !Arrays.equals(key, rejectedKey))) {
        rejectedCert = cert;
        rejectedKey = key;
        LOG.warnf(
            "%s and %s are not a usable pair (yet), still serving the previous certificate: %s",
            config.certFile(), config.keyFile(), rejection);
      }
      return false;
    }
  }

  /**
   * At start there is no previous certificate to keep serving: the server cannot start, and says
   * why with the paths as resolved (relative ones are read from the working directory, which is
   * not the repository when {@code run} is started from elsewhere).
   */
  private void serveFiles() {
    if (!check()) {
      throw new IllegalStateException(
          "no usable certificate at "
              + config.certFile().toAbsolutePath()
              + " and "
              + config.keyFile().toAbsolutePath()
              + " ("
              + rejection
              + "): certs/make-dev-certs.sh makes one (relative paths are read from the working"
              + " directory, "
              + Path.of("").toAbsolutePath()
              + "; start from the repository root), GPU_ADMISSION_TLS_CERT and"
              + " GPU_ADMISSION_TLS_KEY point elsewhere");
    }
  }

  /**
   * Self-managed: the real certificate comes from the Secret once the application runs; until then
   * a throwaway one lets the listener start (readiness stays down meanwhile).
   */
  private void serveBootstrap() {
    try {
      var now = Instant.now();
      var ca = CertificateIssuer.newCa("gpu-admission-bootstrap", now, Duration.ofDays(1));
      var bootstrap =
          CertificateIssuer.serving(
              ca, ca.caCertificates(), List.of("localhost"), now, Duration.ofDays(1));
      serve(bootstrap.key(), new X509Certificate[] {bootstrap.certificate()});
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("could not make a bootstrap certificate", e);
    }
  }

  /** Serves {@code chain} (the leaf first, then any intermediates, as the file has them). */
  private void serve(PrivateKey key, X509Certificate[] chain) {
    keyManager.serve(key, chain);
    var certificate = chain[0];
    served = certificate;
    LOG.infof(
        "serving certificate %s (expires %s)",
        certificate.getSubjectX500Principal().getName(), certificate.getNotAfter().toInstant());
  }

  private record Pair(PrivateKey key, X509Certificate[] chain) {}

  private static Pair parse(byte[] certPem, byte[] keyPem) throws GeneralSecurityException {
    if (certPem.length == 0 || keyPem.length == 0) {
      throw new GeneralSecurityException("a file is missing or empty");
    }
    var chain = Pem.readCertificates(new String(certPem, StandardCharsets.US_ASCII)).toArray(X509Certificate[]::new);
    var key = Pem.readPrivateKey(new String(keyPem, StandardCharsets.US_ASCII));
    if (signatureFor(key) == null) {
      throw new GeneralSecurityException(
          "the key is " + key.getAlgorithm() + "; the listener serves RSA and ECDSA keys (cert-manager:"
              + " privateKey.algorithm RSA or ECDSA)");
    }
    if (!matches(key, chain[0])) {
      throw new GeneralSecurityException("the key does not belong to the certificate");
    }
    return new Pair(key, chain);
  }

  /** Signs a nonce with the key and verifies it with the certificate's public key. */
  static boolean matches(PrivateKey key, X509Certificate certificate) {
    var algorithm = signatureFor(key);
    if (algorithm == null) {
      return false;
    }
    try {
      var nonce = "gpu-admission".getBytes(StandardCharsets.US_ASCII);
      var signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(nonce);
      var signature = signer.sign();
      var verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(nonce);
      return verifier.verify(signature);
    } catch (GeneralSecurityException | RuntimeException e) {
      return false;
    }
  }

  /**
   * The signature that proves a key pair, for the key types the listener can serve; null for
   * others (Ed25519: neither JSSE's key manager protocol nor OpenSSL's asks for it here).
   */
  private static String signatureFor(PrivateKey key) {
    return switch (key.getAlgorithm()) {
      case "EC" -> "SHA256withECDSA";
      case "RSA" -> "SHA256withRSA";
      default -> null;
    };
  }

  private double notAfterSeconds() {
    var certificate = served;
    return certificate == null ? Double.NaN : certificate.getNotAfter().getTime() / 1000.0;
  }

  private void checkQuietly() {
    try {
      check();
    } catch (RuntimeException e) {
      LOG.warnf("checking the certificate files failed: %s", e.toString());
    }
  }

  private static byte[] readOrEmpty(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException missing) {
      return new byte[0];
    }
  }

  static Thread daemon(Runnable runnable, String name) {
    var thread = new Thread(runnable, name);
    thread.setDaemon(true);
    return thread;
  }
}
