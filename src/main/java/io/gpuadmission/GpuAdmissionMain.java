package io.gpuadmission;

import io.gpuadmission.tls.CertificateIssuer;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Starts the service. With self-managed certificates (the install without cert-manager) the PEM
 * files live in an empty volume and the TLS registry refuses to start without them, while the
 * real certificate can only be read from (or made into) the Secret once the application runs. So a
 * throwaway certificate is written first; {@code SelfManagedCertificates} replaces it within
 * seconds, and readiness stays down until it has.
 */
@QuarkusMain
public final class GpuAdmissionMain {
  private GpuAdmissionMain() {}

  public static void main(String... args) throws IOException, GeneralSecurityException {
    if ("true".equalsIgnoreCase(System.getenv("GPU_ADMISSION_TLS_SELF_MANAGED"))) {
      writeBootstrapCertificate(
          Path.of(envOr("GPU_ADMISSION_TLS_CERT", "certs/dev/tls.crt")),
          Path.of(envOr("GPU_ADMISSION_TLS_KEY", "certs/dev/tls.key")));
    }
    Quarkus.run(args);
  }

  static void writeBootstrapCertificate(Path cert, Path key) throws IOException, GeneralSecurityException {
    if (Files.exists(cert) && Files.exists(key)) {
      return;
    }
    var now = Instant.now();
    var ca = CertificateIssuer.newCa("gpu-admission-bootstrap", now, Duration.ofDays(1));
    var serving = CertificateIssuer.serving(ca, List.of(ca.signingCa()), List.of("localhost"), now, Duration.ofDays(1));
    Files.createDirectories(key.toAbsolutePath().getParent());
    Files.write(key, serving.keyPem().getBytes(StandardCharsets.US_ASCII));
    Files.write(cert, serving.certificatePem().getBytes(StandardCharsets.US_ASCII));
  }

  private static String envOr(String name, String fallback) {
    var value = System.getenv(name);
    return value == null || value.isBlank() ? fallback : value;
  }
}
