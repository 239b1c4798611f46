package io.gpuadmission.tls;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.tls.CertificateUpdatedEvent;
import io.quarkus.tls.TlsConfigurationRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The certificate the HTTPS listener serves, kept equal to the PEM files. Instead of the TLS
 * registry's reload-period (which rebuilds a PKCS#12 store with PBKDF2 on every tick), the files'
 * bytes are compared every check period and the registry reloads only when they changed and the
 * key matches the certificate (a half-replaced pair would break every handshake).
 */
@ApplicationScoped
public class ServedCertificate {
  private static final Logger LOG = Logger.getLogger(ServedCertificate.class);
  /** The TLS registry's name for the default configuration, which the HTTPS server uses. */
  private static final String DEFAULT_TLS_CONFIGURATION = "<default>";

  private final Path certFile;
  private final Path keyFile;
  private final CertificateConfig config;
  private final TlsConfigurationRegistry registry;
  private final Event<CertificateUpdatedEvent> updated;
  private ScheduledExecutorService timer;
  private byte[] servedCert = new byte[0];
  private byte[] servedKey = new byte[0];
  private volatile double notAfterEpochSeconds = Double.NaN;

  public ServedCertificate(
      @ConfigProperty(name = "quarkus.tls.key-store.pem.0.cert") Path certFile,
      @ConfigProperty(name = "quarkus.tls.key-store.pem.0.key") Path keyFile,
      CertificateConfig config,
      TlsConfigurationRegistry registry,
      Event<CertificateUpdatedEvent> updated) {
    this.certFile = certFile;
    this.keyFile = keyFile;
    this.config = config;
    this.registry = registry;
    this.updated = updated;
  }

  void start(@Observes StartupEvent event, MeterRegistry meters) {
    synchronized (this) {
      // What the registry loaded at start-up is what is served now.
      servedCert = readOrEmpty(certFile);
      servedKey = readOrEmpty(keyFile);
      notAfterEpochSeconds = notAfter(servedCert);
    }
    Gauge.builder("gpu_admission_certificate_expiry_timestamp", this, c -> c.notAfterEpochSeconds)
        .description("When the serving certificate expires (Unix time)")
        .baseUnit("seconds")
        .register(meters);
    timer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "certificate-files"));
    var period = config.checkPeriod().toMillis();
    timer.scheduleWithFixedDelay(this::checkQuietly, period, period, TimeUnit.MILLISECONDS);
  }

  void stop(@Observes ShutdownEvent event) {
    if (timer != null) {
      timer.shutdownNow();
    }
  }

  /**
   * Writes a new certificate and key (each file replaced atomically) and serves them at once.
   * Returns false when the files already hold them.
   */
  public synchronized boolean install(CertificateBundle bundle) throws IOException {
    var cert = bundle.certificatePem().getBytes(StandardCharsets.US_ASCII);
    var key = bundle.keyPem().getBytes(StandardCharsets.US_ASCII);
    if (Arrays.equals(cert, servedCert) && Arrays.equals(key, servedKey)) {
      return false;
    }
    replace(keyFile, key);
    replace(certFile, cert);
    return check();
  }

  /** Reloads the TLS registry if the files changed; returns true when a new pair is served. */
  public synchronized boolean check() {
    var cert = readOrEmpty(certFile);
    var key = readOrEmpty(keyFile);
    if (Arrays.equals(cert, servedCert) && Arrays.equals(key, servedKey)) {
      return false;
    }
    if (!pairMatches(cert, key)) {
      LOG.warnf("%s and %s do not hold a matching certificate and key (yet); still serving the previous pair", certFile, keyFile);
      return false;
    }
    var tls = registry.getDefault().orElseThrow();
    if (!tls.reload()) {
      LOG.warnf("the TLS registry could not load %s and %s; still serving the previous pair", certFile, keyFile);
      return false;
    }
    updated.fire(new CertificateUpdatedEvent(DEFAULT_TLS_CONFIGURATION, tls));
    servedCert = cert;
    servedKey = key;
    notAfterEpochSeconds = notAfter(cert);
    LOG.infof("serving the certificate from %s (expires %s)", certFile, java.time.Instant.ofEpochSecond((long) notAfterEpochSeconds));
    return true;
  }

  private void checkQuietly() {
    try {
      check();
    } catch (RuntimeException e) {
      LOG.warnf("checking the certificate files failed: %s", e.toString());
    }
  }

  /** Signs a nonce with the key and verifies it with the certificate; an unreadable key is let through to the registry. */
  static boolean pairMatches(byte[] certPem, byte[] keyPem) {
    try {
      var certificate = Pem.readCertificates(new String(certPem, StandardCharsets.US_ASCII)).get(0);
      java.security.PrivateKey key;
      try {
        key = Pem.readPrivateKey(new String(keyPem, StandardCharsets.US_ASCII));
      } catch (GeneralSecurityException notPkcs8) {
        return true;
      }
      var algorithm = "EC".equals(key.getAlgorithm()) ? "SHA256withECDSA" : "SHA256withRSA";
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

  private static double notAfter(byte[] certPem) {
    try {
      return Pem.readCertificates(new String(certPem, StandardCharsets.US_ASCII)).get(0).getNotAfter().getTime() / 1000.0;
    } catch (GeneralSecurityException | RuntimeException e) {
      return Double.NaN;
    }
  }

  private static byte[] readOrEmpty(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException missing) {
      return new byte[0];
    }
  }

  private static void replace(Path file, byte[] content) throws IOException {
    var parent = file.toAbsolutePath().getParent();
    Files.createDirectories(parent);
    var temporary = Files.createTempFile(parent, file.getFileName().toString(), ".new");
    Files.write(temporary, content);
    Files.move(temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  static Thread daemon(Runnable runnable, String name) {
    var thread = new Thread(runnable, name);
    thread.setDaemon(true);
    return thread;
  }
}
