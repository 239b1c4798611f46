package io.gpuadmission.tls;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** How the serving certificate is watched and, without cert-manager, made and renewed. */
@ConfigMapping(prefix = "gpu-admission.tls")
public interface CertificateConfig {
  /** PEM file with the serving certificate (and any chain after it); unused when self-managed. */
  @WithDefault("certs/dev/tls.crt")
  java.nio.file.Path certFile();

  /** PEM file with its private key (PKCS#8, PKCS#1 or SEC1). */
  @WithDefault("certs/dev/tls.key")
  java.nio.file.Path keyFile();

  /** How often the PEM files are compared with what was last read; a change is served at once. */
  @WithDefault("10s")
  Duration checkPeriod();

  /**
   * Serve HTTPS with OpenSSL (netty-tcnative's BoringSSL) when it loads here; false keeps the JDK's
   * TLS engine. The protocols and cipher suites are the same either way.
   */
  @WithDefault("true")
  boolean openssl();

  /**
   * Make the CA and serving certificate in a Secret when none exists, renew them, serve them, and
   * write the CA into this service's webhook configurations (the install without cert-manager). Off
   * for local runs and for cert-manager, which does the same job.
   */
  @WithDefault("false")
  boolean selfManaged();

  /** Secret holding {@code ca.crt}, {@code ca.key}, {@code tls.crt} and {@code tls.key}. */
  @WithDefault("gpu-admission-tls")
  String secretName();

  /** Service the API server and the scheduler call; its DNS names go into the certificate. */
  @WithDefault("gpu-admission")
  String serviceName();

  /** Name of the Mutating- and ValidatingWebhookConfiguration whose caBundle is kept current. */
  @WithDefault("gpu-admission")
  String webhookConfigurationName();

  /** How often the Secret and the caBundles are checked (and renewed when due). */
  @WithDefault("1m")
  Duration syncPeriod();

  /** Lifetime of a serving certificate; it is renewed when a third of it is left. */
  @WithDefault("365d")
  Duration servingValidity();

  /**
   * Lifetime of the CA. The next CA joins the trusted CAs (ca.crt and every caBundle) when less than
   * one serving lifetime plus {@link #caOverlap()} is left, and signs serving certificates only once
   * it has been trusted for the overlap.
   */
  @WithDefault("1825d")
  Duration caValidity();

  /**
   * How long a new CA is trusted before it signs: time for every replica and the API server to pick
   * up the new caBundle, and for the second scheduler (which reads its caFile only at start) to be
   * restarted once.
   */
  @WithDefault("90d")
  Duration caOverlap();
}
