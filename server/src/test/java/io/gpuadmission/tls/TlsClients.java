package io.gpuadmission.tls;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * Test clients that trust exactly the CAs given, and fresh handshakes that show the served
 * certificate.
 */
final class TlsClients {
  private TlsClients() {}

  static SSLContext trusting(List<X509Certificate> cas)
      throws GeneralSecurityException, IOException {
    var store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    for (int i = 0; i < cas.size(); i++) {
      store.setCertificateEntry("ca-" + i, cas.get(i));
    }
    var trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(store);
    var context = SSLContext.getInstance("TLS");
    context.init(null, trust.getTrustManagers(), null);
    return context;
  }

  /** For looking at what is served, whoever signed it. */
  static SSLContext trustingAnything() throws GeneralSecurityException {
    return io.gpuadmission.support.TrustAnything.context();
  }

  /**
   * A new connection's handshake with {@code protocol}; returns the certificate the server
   * presented.
   */
  static X509Certificate handshake(SSLContext context, int port, String protocol)
      throws IOException {
    return (X509Certificate) handshakeChain(context, port, protocol).get(0);
  }

  /** A new connection's handshake with {@code protocol}; the chain the server presented. */
  static List<java.security.cert.Certificate> handshakeChain(SSLContext context, int port, String protocol)
      throws IOException {
    try (var socket = (SSLSocket) context.getSocketFactory().createSocket("localhost", port)) {
      socket.setSoTimeout(30_000);
      socket.setEnabledProtocols(new String[] {protocol});
      socket.startHandshake();
      return List.of(socket.getSession().getPeerCertificates());
    }
  }
}
