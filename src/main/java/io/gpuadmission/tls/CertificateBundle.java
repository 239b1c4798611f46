package io.gpuadmission.tls;

import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the Secret holds: the CA that signs (and, during a CA change, the previous CAs that are
 * still valid, so certificates they signed stay trusted), its key, and the serving certificate and
 * key.
 */
public record CertificateBundle(
    List<X509Certificate> caCertificates,
    PrivateKey caKey,
    X509Certificate certificate,
    PrivateKey key) {
  static final String CA_CRT = "ca.crt";
  static final String CA_KEY = "ca.key";
  static final String TLS_CRT = "tls.crt";
  static final String TLS_KEY = "tls.key";

  public CertificateBundle {
    caCertificates = List.copyOf(caCertificates);
  }

  /** The CA that signs new serving certificates: the first of {@link #caCertificates()}. */
  public X509Certificate signingCa() {
    return caCertificates.get(0);
  }

  /** The {@code caBundle} of the webhook configurations: every CA still trusted, as PEM. */
  public String caPem() {
    return Pem.certificates(caCertificates);
  }

  public String certificatePem() {
    return Pem.certificates(List.of(certificate));
  }

  public String keyPem() {
    return Pem.privateKey(key);
  }

  /** Secret {@code data}: base64 of each PEM file. */
  public Map<String, String> toSecretData() {
    var data = new LinkedHashMap<String, String>();
    data.put(CA_CRT, base64(caPem()));
    data.put(CA_KEY, base64(Pem.privateKey(caKey)));
    data.put(TLS_CRT, base64(certificatePem()));
    data.put(TLS_KEY, base64(keyPem()));
    return data;
  }

  /** Reads Secret {@code data}; a missing key or unreadable PEM is an exception naming it. */
  public static CertificateBundle fromSecretData(Map<String, String> data)
      throws GeneralSecurityException {
    if (data == null) {
      throw new GeneralSecurityException("the Secret has no data");
    }
    return new CertificateBundle(
        Pem.readCertificates(text(data, CA_CRT)),
        Pem.readPrivateKey(text(data, CA_KEY)),
        Pem.readCertificates(text(data, TLS_CRT)).get(0),
        Pem.readPrivateKey(text(data, TLS_KEY)));
  }

  /** CAs that will still be valid at {@code instant}, the signing CA first. */
  List<X509Certificate> casValidAt(Instant instant) {
    var valid = new ArrayList<X509Certificate>();
    for (var ca : caCertificates) {
      if (ca.getNotAfter().toInstant().isAfter(instant)) {
        valid.add(ca);
      }
    }
    return valid;
  }

  private static String text(Map<String, String> data, String key) throws GeneralSecurityException {
    var value = data.get(key);
    if (value == null || value.isEmpty()) {
      throw new GeneralSecurityException("the Secret has no " + key);
    }
    return new String(
        Base64.getDecoder().decode(value), java.nio.charset.StandardCharsets.US_ASCII);
  }

  private static String base64(String pem) {
    return Base64.getEncoder()
        .encodeToString(pem.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }
}
