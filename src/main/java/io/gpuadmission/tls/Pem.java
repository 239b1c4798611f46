package io.gpuadmission.tls;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;

/** PEM text to and from JDK certificates and PKCS#8 keys, the formats Vert.x and kubectl read. */
public final class Pem {
  private static final Pattern PKCS8 =
      Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
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
    var parsed = factory.generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    if (parsed.isEmpty()) {
      throw new GeneralSecurityException("no certificate in the PEM text");
    }
    return parsed.stream().map(X509Certificate.class::cast).toList();
  }

  /** A PKCS#8 key ({@code BEGIN PRIVATE KEY}) of algorithm EC or RSA. */
  public static PrivateKey readPrivateKey(String pem) throws GeneralSecurityException {
    var matcher = PKCS8.matcher(pem);
    if (!matcher.find()) {
      throw new GeneralSecurityException("no PKCS#8 private key (BEGIN PRIVATE KEY) in the PEM text");
    }
    var spec = new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(matcher.group(1)));
    for (var algorithm : List.of("EC", "RSA")) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (java.security.spec.InvalidKeySpecException notThisOne) {
        // try the next algorithm
      }
    }
    throw new GeneralSecurityException("the private key is neither EC nor RSA");
  }

  private static String block(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + ENCODER.encodeToString(der) + "\n-----END " + type + "-----\n";
  }
}
