package io.gpuadmission.support;

import io.gpuadmission.tls.Pem;
import io.restassured.RestAssured;
import io.restassured.config.RestAssuredConfig;
import io.restassured.config.SSLConfig;
import io.restassured.specification.RequestSpecification;
import io.vertx.core.net.PemKeyCertOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/**
 * Calls the extender as kube-scheduler does: with the client certificate certs/make-dev-certs.sh
 * writes (certs/dev/scheduler.crt, CN system:kube-scheduler, signed by the dev CA the tests'
 * server trusts), or with any other certificate and key a test makes. The server's certificate is
 * not checked (tests look at answers, not at who serves them).
 */
public final class SchedulerCaller {
  public static final Path CERT = Path.of("certs/dev/scheduler.crt");
  public static final Path KEY = Path.of("certs/dev/scheduler.key");

  private SchedulerCaller() {}

  /** rest-assured presenting the dev scheduler certificate. */
  public static RequestSpecification given() {
    return given(context());
  }

  /** rest-assured over {@code context} (one of this class's, or {@link TrustAnything#context()}). */
  public static RequestSpecification given(SSLContext context) {
    @SuppressWarnings("deprecation")
    var factory =
        new org.apache.http.conn.ssl.SSLSocketFactory(
            context, org.apache.http.conn.ssl.SSLSocketFactory.ALLOW_ALL_HOSTNAME_VERIFIER);
    return RestAssured.given().config(RestAssuredConfig.config().sslConfig(SSLConfig.sslConfig().sslSocketFactory(factory)));
  }

  /** TLS presenting the dev scheduler certificate. */
  public static SSLContext context() {
    try {
      return context(
          Pem.readCertificates(Files.readString(CERT)), Pem.readPrivateKey(Files.readString(KEY)));
    } catch (IOException e) {
      throw new UncheckedIOException(CERT + " is missing: certs/make-dev-certs.sh writes it", e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** TLS presenting {@code chain} (leaf first) with {@code key}. */
  public static SSLContext context(List<X509Certificate> chain, PrivateKey key) {
    try {
      var store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry("caller", key, new char[0], chain.toArray(X509Certificate[]::new));
      var keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, new char[0]);
      var context = SSLContext.getInstance("TLS");
      context.init(keys.getKeyManagers(), new TrustManager[] {TrustAnything.manager()}, null);
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("could not build a client TLS context", e);
    }
  }

  /** TLS presenting the certificate and key of a kubernetes.io/tls Secret (gpu-scheduler-client). */
  public static SSLContext fromSecret(io.fabric8.kubernetes.api.model.Secret secret) {
    try {
      var data = secret.getData();
      return context(Pem.readCertificates(decoded(data.get("tls.crt"))), Pem.readPrivateKey(decoded(data.get("tls.key"))));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("Secret " + secret.getMetadata().getName() + " holds no usable certificate", e);
    }
  }

  private static String decoded(String base64) {
    return new String(java.util.Base64.getDecoder().decode(base64), java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** The dev scheduler certificate for a Vert.x client. */
  public static PemKeyCertOptions vertxKeyCert() {
    return new PemKeyCertOptions().setCertPath(CERT.toString()).setKeyPath(KEY.toString());
  }
}
