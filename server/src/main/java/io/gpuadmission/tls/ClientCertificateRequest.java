package io.gpuadmission.tls;

import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.TrustOptions;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.Socket;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Asks every HTTPS client for a certificate without requiring one (client auth REQUEST): the
 * extender's callers present kube-scheduler's, the API server calls the admission endpoints with
 * none, and probes and Prometheus neither. The handshake takes whatever is presented (the client
 * still proves it holds the key); {@link TrustedCallers} judges the chain per extender request, so
 * a wrong certificate costs the caller a 401 on the extender, never a failed handshake on /mutate.
 * No CA list is sent, so a client with one certificate (kube-scheduler's Go client, curl) presents
 * it whoever signed it. Works the same with the JDK's and OpenSSL's TLS engines.
 */
@ApplicationScoped
public class ClientCertificateRequest implements HttpServerOptionsCustomizer {
  @Override
  public void customizeHttpsServer(HttpServerOptions options) {
    options.setClientAuth(ClientAuth.REQUEST);
    options.setTrustOptions(TrustOptions.wrap(new AnyClient()));
  }

  /** Accepts any client chain at the handshake; never used for servers. */
  private static final class AnyClient extends X509ExtendedTrustManager {
    private static final X509Certificate[] NO_ISSUERS = new X509Certificate[0];

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      throw new CertificateException("the HTTPS listener trusts no server");
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
      checkServerTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
      checkServerTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return NO_ISSUERS;
    }
  }
}
