package io.gpuadmission.tls;

import io.netty.handler.ssl.OpenSsl;
import io.quarkus.runtime.ImageMode;
import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Puts the HTTPS listener on OpenSSL (BoringSSL, through netty-tcnative) instead of the JDK's TLS
 * engine. Every review pays TLS record crypto, and the JDK engine also needs heap copies of each
 * record; with OpenSSL the cheapest review costs about a fifth less CPU (bench/README.md, issue
 * 10). The key material still comes from {@link ServedCertificate}'s key manager, which OpenSSL
 * asks on every handshake, so certificate rotation works as before. Where the native library cannot
 * load (a platform without a bundled build), the JDK engine serves and the log says why. A native
 * executable always serves with the JDK's engine, said at INFO as the choice it is: Quarkus' native
 * build replaces Netty's {@code OpenSsl} with one that is never available (netty-tcnative's JNI
 * library is not in the executable); what that costs per review is in bench/README.md, "Native
 * executables".
 */
@ApplicationScoped
public class OpenSslListener implements HttpServerOptionsCustomizer {
  private static final Logger LOG = Logger.getLogger(OpenSslListener.class);

  private final CertificateConfig config;

  public OpenSslListener(CertificateConfig config) {
    this.config = config;
  }

  @Override
  public void customizeHttpsServer(HttpServerOptions options) {
    if (!config.openssl()) {
      return;
    }
    if (ImageMode.current().isNativeImage()) {
      LOG.info("HTTPS served by the JDK's TLS engine (a native executable has no netty-tcnative)");
      return;
    }
    if (!OpenSsl.isAvailable()) {
      LOG.warnf(
          "OpenSSL is not available here (%s); the JDK's TLS engine serves HTTPS",
          OpenSsl.unavailabilityCause());
      return;
    }
    options.setSslEngineOptions(new OpenSSLEngineOptions().setSessionCacheEnabled(true));
    LOG.infof("HTTPS served by %s", OpenSsl.versionString());
  }
}
