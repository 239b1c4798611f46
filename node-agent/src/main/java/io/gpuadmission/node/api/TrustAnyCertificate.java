package io.gpuadmission.node.api;

import java.security.GeneralSecurityException;
import java.net.Socket;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * TLS that accepts any certificate for any host name: the agent's {@code trust-certs} setting (a
 * test API server's own certificate), and the tests that look at what is served whoever signed it.
 * An extended trust manager: the JDK checks the host name itself around a plain one.
 */
public final class TrustAnyCertificate extends X509ExtendedTrustManager {
  private static final TrustAnyCertificate MANAGER = new TrustAnyCertificate();

  private TrustAnyCertificate() {}

  public static X509TrustManager manager() {
    return MANAGER;
  }

  /** A TLS context trusting any certificate, whatever host name it gives. */
  public static SSLContext context() throws GeneralSecurityException {
    var context = SSLContext.getInstance("TLS");
    context.init(null, new TrustManager[] {MANAGER}, null);
    return context;
  }

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType) {}

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType) {}

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {}

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {}

  @Override
  public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

  @Override
  public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {}

  @Override
  public X509Certificate[] getAcceptedIssuers() {
    return new X509Certificate[0];
  }
}
