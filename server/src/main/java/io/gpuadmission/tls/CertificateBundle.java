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
import java.util.Optional;

/**
 * What the Secret holds: the CAs that are trusted ({@code ca.crt}: the one that signs first, then
 * previous CAs still valid, so certificates they signed stay trusted, and during a CA change the
 * next CA, already trusted but not signing yet), the signing CA's key, the next CA's key ({@code
 * ca-next.key}, null outside a CA change), and the serving certificate and key.
 */
public record CertificateBundle(
    List<X509Certificate> caCertificates,
    PrivateKey caKey,
    X509Certificate certificate,
    PrivateKey key,
    PrivateKey nextCaKey) {
  static final String CA_CRT = "ca.crt";
  static final String CA_KEY = "ca.key";
  static final String NEXT_CA_KEY = "ca-next.key";
  static final String TLS_CRT = "tls.crt";
  static final String TLS_KEY = "tls.key";

  public CertificateBundle {
    caCertificates = List.copyOf(caCertificates);
  }

  /** Outside a CA change: no next CA. */
  public CertificateBundle(List<X509Certificate> caCertificates, PrivateKey caKey, X509Certificate certificate, PrivateKey key) {
    this(caCertificates, caKey, certificate, key, null);
  }

  /** The CA introduced into {@code ca.crt} that will sign once the overlap is over, if any. */
  public Optional<X509Certificate> nextCa() {
    if (nextCaKey == null) {
      return Optional.empty();
    }
    return caCertificates.stream().skip(1).filter(ca -> ServedCertificate.matches(nextCaKey, ca)).findFirst();
  }

  /** This bundle with {@code next} (a new CA and its key) trusted after the others, not signing. */
  CertificateBundle withNextCa(CertificateBundle next) {
    var trusted = new ArrayList<>(caCertificates);
    trusted.add(next.signingCa());
    return new CertificateBundle(trusted, caKey, certificate, key, next.caKey());
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
    if (nextCaKey != null) {
      data.put(NEXT_CA_KEY, base64(Pem.privateKey(nextCaKey)));
    }
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
        Pem.readPrivateKey(text(data, TLS_KEY)),
        data.containsKey(NEXT_CA_KEY) ? Pem.readPrivateKey(text(data, NEXT_CA_KEY)) : null);
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
