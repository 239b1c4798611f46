package io.gpuadmission.tls;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecretList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.net.HttpURLConnection;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Keeps the CA and serving certificate in one Secret. Replicas do not elect a writer: every write
 * is conditional (create fails with 409 if the Secret exists, update with 409 if it changed since
 * it was read), and the replica that loses adopts what the winner wrote. Two replicas can at worst
 * both make a certificate and one of them throws it away; they never overwrite each other, and a
 * Lease would add an object, RBAC and a failover delay for a write that happens once a quarter.
 */
public final class CertificateSecretStore {
  private static final Logger LOG = Logger.getLogger(CertificateSecretStore.class);

  /** What {@link #sync()} did. */
  public enum Action {
    /** No Secret existed: this replica made the CA and certificate. */
    CREATED,
    /** The certificate (and perhaps the CA) was due: this replica renewed it. */
    RENEWED,
    /** The Secret is current; nothing was written. */
    UNCHANGED,
    /** Another replica wrote first; its certificate is used. */
    ADOPTED
  }

  /** The certificate to serve and how it came about. */
  public record Outcome(CertificateBundle bundle, Action action) {}

  private final KubernetesClient client;
  private final String namespace;
  private final String secretName;
  private final List<String> dnsNames;
  private final Duration servingValidity;
  private final Duration caValidity;
  private final Clock clock;

  public CertificateSecretStore(
      KubernetesClient client, String namespace, CertificateConfig config, Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.secretName = config.secretName();
    var service = config.serviceName();
    this.dnsNames =
        List.of(
            service + "." + namespace + ".svc",
            service,
            service + "." + namespace,
            service + "." + namespace + ".svc.cluster.local",
            // A kube-scheduler on the host network reaches the extender on a NodePort at 127.0.0.1.
            "127.0.0.1");
    this.servingValidity = config.servingValidity();
    this.caValidity = config.caValidity();
    this.clock = clock;
  }

  /** Names the serving certificate must carry: the Service's, short and long, and 127.0.0.1. */
  public List<String> dnsNames() {
    return dnsNames;
  }

  /** Reads the Secret, creating or renewing it when needed, and returns what to serve. */
  public Outcome sync() throws GeneralSecurityException {
    var existing = secrets().withName(secretName).get();
    // Read after the Secret: the decision is about the Secret as read, at this moment.
    var now = clock.instant();
    if (existing == null) {
      var created = issue(null, now);
      try {
        secrets().resource(secret(created, null)).create();
        return new Outcome(created, Action.CREATED);
      } catch (KubernetesClientException e) {
        return adoptOrThrow(e);
      }
    }
    var current = read(existing);
    if (current != null && !due(current, now)) {
      return new Outcome(current, Action.UNCHANGED);
    }
    var renewed = issue(current, now);
    try {
      secrets().resource(secret(renewed, existing.getMetadata().getResourceVersion())).update();
      return new Outcome(renewed, Action.RENEWED);
    } catch (KubernetesClientException e) {
      return adoptOrThrow(e);
    }
  }

  /** A 409 means another replica wrote first: use what it wrote. */
  private Outcome adoptOrThrow(KubernetesClientException e) throws GeneralSecurityException {
    if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
      throw e;
    }
    var winner = secrets().withName(secretName).get();
    var bundle = winner == null ? null : read(winner);
    if (bundle == null) {
      throw new GeneralSecurityException(
          "Secret " + secretName + " changed under us and is not usable yet", e);
    }
    return new Outcome(bundle, Action.ADOPTED);
  }

  /** Renewal is due when a third of the certificate's life is left, or it no longer fits. */
  boolean due(CertificateBundle bundle, Instant now) {
    var certificate = bundle.certificate();
    var left = Duration.between(now, certificate.getNotAfter().toInstant());
    return left.compareTo(servingValidity.dividedBy(3)) < 0
        || caTooShort(bundle, now)
        || !signedBy(certificate, bundle.signingCa())
        || !names(certificate).containsAll(dnsNames);
  }

  /** The CA cannot sign a full serving lifetime, or its key is not its own. */
  private boolean caTooShort(CertificateBundle bundle, Instant now) {
    return bundle.signingCa().getNotAfter().toInstant().isBefore(now.plus(servingValidity))
        || !ServedCertificate.matches(bundle.caKey(), bundle.signingCa());
  }

  /**
   * A new serving certificate; a new CA too when there is none or the current one ends too soon.
   */
  private CertificateBundle issue(CertificateBundle current, Instant now)
      throws GeneralSecurityException {
    CertificateBundle ca = current;
    var trusted = current == null ? List.<X509Certificate>of() : current.casValidAt(now);
    if (current == null || caTooShort(current, now)) {
      ca = CertificateIssuer.newCa("gpu-admission-ca", now, caValidity);
      var withNew = new ArrayList<X509Certificate>(List.of(ca.signingCa()));
      withNew.addAll(trusted);
      trusted = withNew;
    }
    return CertificateIssuer.serving(ca, trusted, dnsNames, now, servingValidity);
  }

  private CertificateBundle read(Secret secret) {
    try {
      return CertificateBundle.fromSecretData(secret.getData());
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      LOG.warnf(
          "Secret %s/%s is not a usable certificate (%s); replacing it",
          namespace, secretName, e.getMessage());
      return null;
    }
  }

  private Secret secret(CertificateBundle bundle, String resourceVersion) {
    return new SecretBuilder()
        .withNewMetadata()
        .withName(secretName)
        .withNamespace(namespace)
        .withResourceVersion(resourceVersion)
        .addToLabels("app.kubernetes.io/name", "gpu-admission")
        .addToLabels("app.kubernetes.io/managed-by", "gpu-admission")
        .endMetadata()
        .withType("kubernetes.io/tls")
        .withData(bundle.toSecretData())
        .build();
  }

  private NonNamespaceOperation<Secret, SecretList, Resource<Secret>> secrets() {
    return client.secrets().inNamespace(namespace);
  }

  private static boolean signedBy(X509Certificate certificate, X509Certificate ca) {
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
