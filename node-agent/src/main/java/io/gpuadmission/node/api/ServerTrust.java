package io.gpuadmission.node.api;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.util.HashSet;
import javax.net.ssl.CertPathTrustManagerParameters;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** The TLS contexts the agent trusts the API server with. */
final class ServerTrust {
  private ServerTrust() {}

  /**
   * Trusts the certificates of {@code ca} (PEM, one or more: the service account's {@code ca.crt})
   * as PKIX trust anchors, revocation unchecked as the JDK's default trust manager leaves it. The
   * anchors go to the trust manager directly rather than through a key store: a PKCS12 store, the
   * JDK's default type, loads ~60 classes the agent would carry for nothing.
   */
  static SSLContext caFile(Path ca) {
    try (var in = Files.newInputStream(ca)) {
      var anchors = new HashSet<TrustAnchor>();
      for (var cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        anchors.add(new TrustAnchor((X509Certificate) cert, null));
      }
      if (anchors.isEmpty()) {
        throw new IllegalStateException("cannot read the API server's CA " + ca + ": no certificate in it");
      }
      var parameters = new PKIXBuilderParameters(anchors, null);
      parameters.setRevocationEnabled(false);
      var trust = TrustManagerFactory.getInstance("PKIX");
      trust.init(new CertPathTrustManagerParameters(parameters));
      var context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), null);
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot read the API server's CA " + ca + ": " + e.getMessage(), e);
    }
  }

  /** No CA file: the JDK's own trust store (an API server with a publicly trusted certificate). */
  static SSLContext jdkDefault() {
    try {
      return SSLContext.getDefault();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
