package io.gpuadmission.tls;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Makes a CA and serving certificates signed by it (ECDSA P-256, as cert-manager's overlay asks
 * for). The JDK can verify and parse certificates but has no public API to build one.
 */
public final class CertificateIssuer {
  /** Backdated so that a node whose clock is a little behind still accepts a fresh certificate. */
  private static final Duration CLOCK_SKEW = Duration.ofMinutes(5);

  private static final SecureRandom RANDOM = new SecureRandom();

  private CertificateIssuer() {}

  /** A new self-signed CA whose key signs serving certificates. */
  public static CertificateBundle newCa(String commonName, Instant now, Duration validity)
      throws GeneralSecurityException {
    var keys = keyPair();
    var name = new X500Name("CN=" + commonName);
    var builder = builder(name, name, keys, now, validity);
    try {
      var utils = new JcaX509ExtensionUtils();
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
      builder.addExtension(
          Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
      builder.addExtension(
          Extension.subjectKeyIdentifier,
          false,
          utils.createSubjectKeyIdentifier(keys.getPublic()));
    } catch (CertIOException e) {
      throw new GeneralSecurityException("could not build the CA certificate", e);
    }
    var ca = sign(builder, keys);
    return new CertificateBundle(List.of(ca), keys.getPrivate(), ca, keys.getPrivate());
  }

  /**
   * A serving certificate for {@code dnsNames} (IPv4 literals become IP names) signed by {@code ca}'s signing CA; the result keeps
   * {@code trustedCas} (the signing CA first) as its CA list.
   */
  public static CertificateBundle serving(
      CertificateBundle ca,
      List<X509Certificate> trustedCas,
      List<String> dnsNames,
      Instant now,
      Duration validity)
      throws GeneralSecurityException {
    var keys = keyPair();
    var issuer = X500Name.getInstance(ca.signingCa().getSubjectX500Principal().getEncoded());
    var builder = builder(issuer, new X500Name("CN=" + dnsNames.get(0)), keys, now, validity);
    var names = new ArrayList<GeneralName>();
    for (var name : dnsNames) {
      // An IP literal (127.0.0.1: the extender's NodePort seen from a host-network scheduler).
      var ip = Character.isDigit(name.charAt(0)) && name.matches("[0-9.]+");
      names.add(new GeneralName(ip ? GeneralName.iPAddress : GeneralName.dNSName, name));
    }
    try {
      var utils = new JcaX509ExtensionUtils();
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      builder.addExtension(
          Extension.keyUsage,
          true,
          new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
      builder.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));
      builder.addExtension(
          Extension.subjectAlternativeName,
          false,
          new GeneralNames(names.toArray(GeneralName[]::new)));
      builder.addExtension(
          Extension.authorityKeyIdentifier,
          false,
          utils.createAuthorityKeyIdentifier(ca.signingCa()));
    } catch (CertIOException e) {
      throw new GeneralSecurityException("could not build the serving certificate", e);
    }
    var signer = new KeyPair(ca.signingCa().getPublicKey(), ca.caKey());
    return new CertificateBundle(trustedCas, ca.caKey(), sign(builder, signer), keys.getPrivate());
  }

  /**
   * A client certificate for {@code commonName} (kube-scheduler's: {@code system:kube-scheduler})
   * signed by {@code ca}'s signing CA, for TLS client authentication only; the result keeps {@code
   * trustedCas} as its CA list.
   */
  public static CertificateBundle client(
      CertificateBundle ca,
      List<X509Certificate> trustedCas,
      String commonName,
      Instant now,
      Duration validity)
      throws GeneralSecurityException {
    var keys = keyPair();
    var issuer = X500Name.getInstance(ca.signingCa().getSubjectX500Principal().getEncoded());
    var builder = builder(issuer, new X500Name("CN=" + commonName), keys, now, validity);
    try {
      var utils = new JcaX509ExtensionUtils();
      builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
      builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
      builder.addExtension(
          Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
      builder.addExtension(
          Extension.authorityKeyIdentifier,
          false,
          utils.createAuthorityKeyIdentifier(ca.signingCa()));
    } catch (CertIOException e) {
      throw new GeneralSecurityException("could not build the client certificate", e);
    }
    var signer = new KeyPair(ca.signingCa().getPublicKey(), ca.caKey());
    return new CertificateBundle(trustedCas, ca.caKey(), sign(builder, signer), keys.getPrivate());
  }

  private static X509v3CertificateBuilder builder(
      X500Name issuer, X500Name subject, KeyPair keys, Instant now, Duration validity) {
    return new JcaX509v3CertificateBuilder(
        issuer,
        new BigInteger(127, RANDOM).add(BigInteger.ONE),
        Date.from(now.minus(CLOCK_SKEW)),
        Date.from(now.plus(validity)),
        subject,
        keys.getPublic());
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer)
      throws GeneralSecurityException {
    try {
      var contentSigner = new JcaContentSignerBuilder(
                  "RSA".equals(signer.getPrivate().getAlgorithm()) ? "SHA256withRSA" : "SHA256withECDSA")
              .build(signer.getPrivate());
      return new JcaX509CertificateConverter().getCertificate(builder.build(contentSigner));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException("could not sign the certificate", e);
    }
  }

  private static KeyPair keyPair() throws GeneralSecurityException {
    var generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return generator.generateKeyPair();
  }
}
