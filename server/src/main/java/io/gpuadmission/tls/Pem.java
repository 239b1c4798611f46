package io.gpuadmission.tls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Base64;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/** PEM text to and from JDK certificates and private keys (written as PKCS#8). */
public final class Pem {
  private static final Base64.Encoder ENCODER =
      Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));

  private Pem() {}

  public static String certificates(List<X509Certificate> certificates) {
    var out = new StringBuilder();
    for (var certificate : certificates) {
      try {
        out.append(block("CERTIFICATE", certificate.getEncoded()));
      } catch (java.security.cert.CertificateEncodingException e) {
        throw new IllegalStateException("a parsed certificate always encodes", e);
      }
    }
    return out.toString();
  }

  public static String privateKey(PrivateKey key) {
    return block("PRIVATE KEY", key.getEncoded());
  }

  /** Every certificate in {@code pem}, in order. */
  public static List<X509Certificate> readCertificates(String pem) throws GeneralSecurityException {
    var factory = CertificateFactory.getInstance("X.509");
    var parsed =
        factory.generateCertificates(
            new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    if (parsed.isEmpty()) {
      throw new GeneralSecurityException("no certificate in the PEM text");
    }
    return parsed.stream().map(X509Certificate.class::cast).toList();
  }

  /**
   * A private key in any PEM form the usual tools write: PKCS#8 ({@code BEGIN PRIVATE KEY}, openssl
   * 3), PKCS#1 ({@code BEGIN RSA PRIVATE KEY}) or SEC1 ({@code BEGIN EC PRIVATE KEY},
   * cert-manager's default for ECDSA).
   */
  public static PrivateKey readPrivateKey(String pem) throws GeneralSecurityException {
    try (var parser = new PEMParser(new StringReader(pem))) {
      for (Object object; (object = parser.readObject()) != null; ) {
        var converter = new JcaPEMKeyConverter();
        if (object instanceof PEMKeyPair pair) {
          return converter.getPrivateKey(pair.getPrivateKeyInfo());
        }
        if (object instanceof PrivateKeyInfo info) {
          return converter.getPrivateKey(info);
        }
      }
    } catch (IOException e) {
      throw new GeneralSecurityException("unreadable private key PEM: " + e.getMessage(), e);
    }
    throw new GeneralSecurityException("no private key in the PEM text");
  }

  private static String block(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + ENCODER.encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }
}
