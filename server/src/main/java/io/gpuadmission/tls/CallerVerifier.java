package io.gpuadmission.tls;

import java.security.GeneralSecurityException;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateParsingException;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;

/**
 * Decides whether a client certificate chain may call the extender: it must chain to one of the
 * trusted CAs (PKIX, at {@code now}), be meant for client authentication (a serving certificate
 * signed by the same CA is not a caller), and name an allowed caller. Plain JDK types in and out.
 */
public final class CallerVerifier {
  private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
  private static final String ANY_USAGE = "2.5.29.37.0";

  /** The {@link Verdict.Refused#kind()}s, as the refusals metric tags them. */
  public static final List<String> REFUSALS = List.of("no_certificate", "untrusted", "not_client", "name");

  /** What the check says: accepted, or refused with an HTTP status, a reason and a metric tag. */
  public sealed interface Verdict {
    /** The caller may call; {@code certificate} is its leaf. */
    record Accepted(X509Certificate certificate) implements Verdict {}

    /** 401 (no or untrusted certificate) or 403 (trusted, but not an allowed caller). */
    record Refused(int status, String kind, String reason) implements Verdict {}
  }

  private final Set<TrustAnchor> anchors;
  private final List<String> names;

  public CallerVerifier(List<X509Certificate> trustedCas, List<String> names) {
    var set = new HashSet<TrustAnchor>();
    trustedCas.forEach(ca -> set.add(new TrustAnchor(ca, null)));
    this.anchors = Set.copyOf(set);
    this.names = List.copyOf(names);
  }

  /** {@code chain} as the TLS session has it: the leaf first, then any intermediates. */
  public Verdict verify(List<X509Certificate> chain, Instant now) {
    if (chain.isEmpty()) {
      return new Verdict.Refused(
          401,
          "no_certificate",
          "the extender takes calls from kube-scheduler only: present its client certificate"
              + " (tlsConfig certFile/keyFile in the extender stanza)");
    }
    var leaf = chain.get(0);
    if (anchors.isEmpty()) {
      return new Verdict.Refused(401, "untrusted", "no client CA is trusted yet");
    }
    try {
      var path = CertificateFactory.getInstance("X.509").generateCertPath(chain);
      var parameters = new PKIXParameters(anchors);
      parameters.setRevocationEnabled(false);
      parameters.setDate(Date.from(now));
      CertPathValidator.getInstance("PKIX").validate(path, parameters);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      return new Verdict.Refused(
          401,
          "untrusted",
          "client certificate " + subject(leaf) + " is not signed by a trusted client CA or not valid now: "
              + e.getMessage());
    }
    if (!forClients(leaf)) {
      return new Verdict.Refused(
          403, "not_client", "certificate " + subject(leaf) + " is not meant for client authentication");
    }
    if (!names.contains("*") && !names(leaf).stream().anyMatch(names::contains)) {
      return new Verdict.Refused(
          403,
          "name",
          "client certificate " + subject(leaf) + " is not one of the allowed callers " + names);
    }
    return new Verdict.Accepted(leaf);
  }

  private static boolean forClients(X509Certificate leaf) {
    try {
      var usages = leaf.getExtendedKeyUsage();
      return usages == null || usages.contains(CLIENT_AUTH) || usages.contains(ANY_USAGE);
    } catch (CertificateParsingException e) {
      return false;
    }
  }

  /** The subject's CNs and the DNS SANs. */
  static Set<String> names(X509Certificate leaf) {
    var found = new HashSet<String>();
    try {
      for (var rdn : new LdapName(leaf.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          found.add(String.valueOf(rdn.getValue()));
        }
      }
    } catch (InvalidNameException e) {
      // No readable subject: the SANs may still name the caller.
    }
    try {
      var sans = leaf.getSubjectAlternativeNames();
      if (sans != null) {
        sans.stream().filter(san -> (Integer) san.get(0) == 2).forEach(san -> found.add(String.valueOf(san.get(1))));
      }
    } catch (CertificateParsingException e) {
      // As above.
    }
    return found;
  }

  private static String subject(X509Certificate leaf) {
    return "\"" + leaf.getSubjectX500Principal().getName() + "\"";
  }
}
