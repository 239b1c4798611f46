package io.gpuadmission.tls;

import java.security.GeneralSecurityException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Decides what the certificate Secret should hold next: nothing new, a renewed serving certificate,
 * the next CA joining the trusted CAs, the serving certificate moving to that CA once it has been
 * trusted for the overlap, or (when the CA cannot sign at all) a new CA at once.
 */
final class CertificateRenewal {
  private static final Logger LOG = Logger.getLogger(CertificateRenewal.class);
  private static final String CA_NAME = "gpu-admission-ca";
  /** A next CA signs at the latest one day before the current CA ends, overlap or not. */
  private static final Duration LAST_DAY = Duration.ofDays(1);

  private final List<String> dnsNames;
  private final Duration servingValidity;
  private final Duration caValidity;
  private final Duration caOverlap;

  CertificateRenewal(List<String> dnsNames, Duration servingValidity, Duration caValidity, Duration caOverlap) {
    this.dnsNames = List.copyOf(dnsNames);
    this.servingValidity = servingValidity;
    this.caValidity = caValidity;
    this.caOverlap = caOverlap;
  }

  /**
   * What the Secret should hold next, or empty when it is current. A CA change takes two steps so
   * that nobody ever meets a serving certificate signed by a CA it does not trust yet: first the
   * next CA joins the trusted CAs while the current one keeps signing; only after the overlap does
   * it sign the serving certificate. The previous CA stays trusted until it ends.
   */
  Optional<CertificateBundle> next(CertificateBundle current, Instant now) throws GeneralSecurityException {
    if (!canSign(current, now)) {
      // Nothing better is possible: the CA has ended or its key is not its own. Clients that
      // trusted it must take the new caBundle (the webhooks get it at once).
      LOG.warn("the CA cannot sign any more (ended, or its key is not its own); a new CA signs at once");
      return Optional.of(fresh(current, now));
    }
    var nextCa = current.nextCa();
    if (nextCa.isPresent() && !now.isBefore(caSwitch(current).orElseThrow())) {
      var signing = new CertificateBundle(List.of(nextCa.get()), current.nextCaKey(), nextCa.get(), current.nextCaKey());
      var trusted = new ArrayList<X509Certificate>(List.of(nextCa.get()));
      current.casValidAt(now).stream().filter(ca -> !ca.equals(nextCa.get())).forEach(trusted::add);
      return Optional.of(CertificateIssuer.serving(signing, trusted, dnsNames, now, servingValidity));
    }
    if (nextCa.isEmpty() && endsWithin(current.signingCa(), now, servingValidity.plus(caOverlap))) {
      var introduced = pruned(current, now).withNextCa(CertificateIssuer.newCa(CA_NAME, now, caValidity));
      return Optional.of(servingDue(current, now) ? reissued(introduced, now) : introduced);
    }
    return servingDue(current, now) ? Optional.of(reissued(current, now)) : Optional.empty();
  }

  /** When the next CA of {@code bundle} signs (or signed) the serving certificate; empty without one. */
  Optional<Instant> caSwitch(CertificateBundle bundle) {
    return bundle.nextCa().map(next -> {
      var afterOverlap = next.getNotBefore().toInstant().plus(caOverlap);
      var lastDay = bundle.signingCa().getNotAfter().toInstant().minus(LAST_DAY);
      return afterOverlap.isBefore(lastDay) ? afterOverlap : lastDay;
    });
  }

  /** Renewal is due when a third of the certificate's life is left, or it no longer fits. */
  boolean servingDue(CertificateBundle bundle, Instant now) {
    var certificate = bundle.certificate();
    var left = Duration.between(now, certificate.getNotAfter().toInstant());
    return left.compareTo(servingValidity.dividedBy(3)) < 0
        || !signedBy(certificate, bundle.signingCa())
        || !names(certificate).containsAll(dnsNames);
  }

  /** The signing CA is still valid and its key is its own. */
  private static boolean canSign(CertificateBundle bundle, Instant now) {
    return !endsWithin(bundle.signingCa(), now, Duration.ZERO) && ServedCertificate.matches(bundle.caKey(), bundle.signingCa());
  }

  private static boolean endsWithin(X509Certificate certificate, Instant now, Duration within) {
    return certificate.getNotAfter().toInstant().isBefore(now.plus(within));
  }

  /** A new CA that signs at once, trusted before the still valid ones of {@code current}. */
  CertificateBundle fresh(CertificateBundle current, Instant now) throws GeneralSecurityException {
    var ca = CertificateIssuer.newCa(CA_NAME, now, caValidity);
    var trusted = new ArrayList<X509Certificate>(List.of(ca.signingCa()));
    if (current != null) {
      trusted.addAll(current.casValidAt(now));
    }
    return CertificateIssuer.serving(ca, trusted, dnsNames, now, servingValidity);
  }

  /** A new serving certificate from the same signing CA; the trusted CAs and the next CA stay. */
  private CertificateBundle reissued(CertificateBundle bundle, Instant now) throws GeneralSecurityException {
    var renewed = CertificateIssuer.serving(bundle, bundle.casValidAt(now), dnsNames, now, servingValidity);
    return new CertificateBundle(renewed.caCertificates(), renewed.caKey(), renewed.certificate(), renewed.key(), bundle.nextCaKey());
  }

  /** Without the CAs that have ended. */
  private static CertificateBundle pruned(CertificateBundle bundle, Instant now) {
    return new CertificateBundle(bundle.casValidAt(now), bundle.caKey(), bundle.certificate(), bundle.key(), bundle.nextCaKey());
  }

  /** Whether {@code ca}'s key signed {@code certificate}. */
  static boolean signedBy(X509Certificate certificate, X509Certificate ca) {
    try {
      certificate.verify(ca.getPublicKey());
      return true;
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static List<String> names(X509Certificate certificate) {
    try {
      var names = certificate.getSubjectAlternativeNames();
      return names == null ? List.of() : names.stream().map(n -> String.valueOf(n.get(1))).toList();
    } catch (CertificateParsingException e) {
      return List.of();
    }
  }
}
