package io.gpuadmission.tls;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Keeps kube-scheduler's client certificate in a Secret that the second scheduler mounts ({@code
 * tls.crt}, {@code tls.key}, and {@code ca.crt}: the CAs of the serving certificate, for its
 * caFile). Issued by the self-managed CA's signing CA; reissued when a third of its life is left,
 * when another CA signs now (after a CA change), or when it does not name the caller. The previous
 * certificate stays valid until it ends, signed by a CA still trusted, so a scheduler holding it
 * keeps working until it restarts. Writes are conditional, as {@link CertificateSecretStore}'s.
 */
final class SchedulerClientSecretStore {
  private static final Logger LOG = Logger.getLogger(SchedulerClientSecretStore.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String secretName;
  private final String caller;
  private final Duration validity;
  private final Clock clock;

  SchedulerClientSecretStore(KubernetesClient client, String namespace, CallerAuthConfig config, Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.secretName = config.secretName();
    this.caller = config.names().stream().filter(n -> !n.equals("*")).findFirst().orElse("system:kube-scheduler");
    this.validity = config.validity();
    this.clock = clock;
  }

  /** Issues or renews the client certificate when due; true when it wrote the Secret. */
  boolean sync(CertificateBundle serving) throws GeneralSecurityException {
    var secrets = client.secrets().inNamespace(namespace);
    var existing = secrets.withName(secretName).get();
    var now = clock.instant();
    var current = existing == null ? null : read(existing);
    if (current != null && !due(current, serving)) {
      if (!serving.caPem().equals(decoded(existing, CertificateBundle.CA_CRT))) {
        return write(existing, current, serving); // the CAs changed: the scheduler's caFile follows
      }
      return false;
    }
    var issued = CertificateIssuer.client(serving, serving.caCertificates(), caller, now, validity);
    var written = write(existing, issued, serving);
    if (written && current != null) {
      LOG.warnf(
          "kube-scheduler's client certificate in Secret %s/%s was reissued; the previous one stays accepted until %s."
              + " Restart the second scheduler before then (kubectl -n %s rollout restart deployment gpu-scheduler): it reads its certFile only at start",
          namespace, secretName, current.certificate().getNotAfter().toInstant(), namespace);
    } else if (written) {
      LOG.infof("issued kube-scheduler's client certificate %s into Secret %s/%s (expires %s)",
          issued.certificate().getSubjectX500Principal().getName(), namespace, secretName, issued.certificate().getNotAfter().toInstant());
    }
    return written;
  }

  private boolean due(CertificateBundle current, CertificateBundle serving) {
    var certificate = current.certificate();
    var left = Duration.between(clock.instant(), certificate.getNotAfter().toInstant());
    return left.compareTo(validity.dividedBy(3)) < 0
        || !CertificateRenewal.signedBy(certificate, serving.signingCa())
        || !CallerVerifier.names(certificate).contains(caller)
        || !ServedCertificate.matches(current.key(), certificate);
  }

  /** Creates or updates (conditionally); a 409 means another replica wrote first: false. */
  private boolean write(Secret existing, CertificateBundle issued, CertificateBundle serving) {
    var data = new LinkedHashMap<String, String>();
    data.put(CertificateBundle.CA_CRT, base64(serving.caPem()));
    data.put(CertificateBundle.TLS_CRT, base64(issued.certificatePem()));
    data.put(CertificateBundle.TLS_KEY, base64(issued.keyPem()));
    var secret =
        new SecretBuilder()
            .withNewMetadata()
            .withName(secretName)
            .withNamespace(namespace)
            .withResourceVersion(existing == null ? null : existing.getMetadata().getResourceVersion())
            .addToLabels("app.kubernetes.io/name", "gpu-admission")
            .addToLabels("app.kubernetes.io/managed-by", "gpu-admission")
            .endMetadata()
            .withType("kubernetes.io/tls")
            .withData(data)
            .build();
    try {
      var resource = client.secrets().inNamespace(namespace).resource(secret);
      if (existing == null) {
        resource.create();
      } else {
        resource.update();
      }
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
        return false;
      }
      throw e;
    }
  }

  /** The certificate and key the Secret holds, or null when it is not usable. */
  private CertificateBundle read(Secret secret) {
    try {
      var certificate = Pem.readCertificates(decoded(secret, CertificateBundle.TLS_CRT)).get(0);
      var key = Pem.readPrivateKey(decoded(secret, CertificateBundle.TLS_KEY));
      return new CertificateBundle(List.of(certificate), key, certificate, key);
    } catch (GeneralSecurityException | RuntimeException e) {
      LOG.warnf("Secret %s/%s holds no usable client certificate (%s); issuing one", namespace, secretName, e.getMessage());
      return null;
    }
  }

  private static String decoded(Secret secret, String key) {
    Map<String, String> data = secret.getData();
    var value = data == null ? null : data.get(key);
    return value == null ? "" : new String(Base64.getDecoder().decode(value), StandardCharsets.US_ASCII);
  }


  private static String base64(String pem) {
    return Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII));
  }
}
