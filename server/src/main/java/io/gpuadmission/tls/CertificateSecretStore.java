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
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
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
  private final CertificateRenewal renewal;
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
    this.renewal = new CertificateRenewal(dnsNames, config.servingValidity(), config.caValidity(), config.caOverlap());
    this.clock = clock;
  }

  /** Names the serving certificate must carry: the Service's, short and long, and 127.0.0.1. */
  public List<String> dnsNames() {
    return dnsNames;
  }

  /** When the next CA in {@code bundle} signs the serving certificate; empty outside a CA change. */
  public Optional<Instant> caSwitch(CertificateBundle bundle) {
    return renewal.caSwitch(bundle);
  }

  /** Reads the Secret, creating or renewing it when needed, and returns what to serve. */
  public Outcome sync() throws GeneralSecurityException {
    var existing = secrets().withName(secretName).get();
    // Read after the Secret: the decision is about the Secret as read, at this moment.
    var now = clock.instant();
    if (existing == null) {
      var created = renewal.fresh(null, now);
      try {
        secrets().resource(secret(created, null)).create();
        return new Outcome(created, Action.CREATED);
      } catch (KubernetesClientException e) {
        return adoptOrThrow(e);
      }
    }
    var current = read(existing);
    var next = current == null ? Optional.of(renewal.fresh(null, now)) : renewal.next(current, now);
    if (next.isEmpty()) {
      return new Outcome(current, Action.UNCHANGED);
    }
    try {
      secrets().resource(secret(next.get(), existing.getMetadata().getResourceVersion())).update();
      reportCaChange(current, next.get());
      return new Outcome(next.get(), Action.RENEWED);
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

  private void reportCaChange(CertificateBundle before, CertificateBundle after) {
    var introduced = after.nextCa();
    if (introduced.isPresent() && (before == null || before.nextCa().isEmpty())) {
      LOG.warnf(
          "a new CA joined the trusted CAs of Secret %s/%s (ca.crt, webhook caBundles); it signs the serving certificate from %s."
              + " Restart the second scheduler before then (kubectl -n %s rollout restart deployment gpu-scheduler): it reads its caFile only at start",
          namespace, secretName, caSwitch(after).orElseThrow(), namespace);
    } else if (before != null && !after.signingCa().equals(before.signingCa())) {
      LOG.infof("the serving certificate of Secret %s/%s is now signed by the CA that joined the trusted CAs on %s",
          namespace, secretName, after.signingCa().getNotBefore().toInstant());
    }
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
}
