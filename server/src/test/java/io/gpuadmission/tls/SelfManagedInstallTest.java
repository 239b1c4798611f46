package io.gpuadmission.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The install without cert-manager, end to end on the mock API server: the app starts with a
 * throwaway certificate, makes the Secret, serves its certificate, writes the CA into the webhook
 * configurations of manifests/base, turns ready, and follows a renewal another replica wrote.
 */
@QuarkusTest
@TestProfile(SelfManagedInstallTest.SelfManaged.class)
@WithKubernetesTestServer(crud = true, setup = SelfManagedInstallTest.Webhooks.class)
class SelfManagedInstallTest {
  private static final String NAMESPACE = "gpu-admission";

  /** Self-managed certificates, synced every half second. */
  public static final class SelfManaged implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of(
          "gpu-admission.tls.self-managed", "true", "gpu-admission.tls.sync-period", "500ms");
    }
  }

  /** The webhook configurations as `kubectl apply -k manifests` creates them: no caBundle. */
  public static final class Webhooks implements Consumer<KubernetesServer> {
    @Override
    @SuppressWarnings("unchecked")
    public void accept(KubernetesServer server) {
      try {
        var objects =
            (List<HasMetadata>)
                new KubernetesSerialization()
                    .unmarshal(Files.readString(Path.of("manifests/base/webhooks.yaml")));
        objects.stream()
            .filter(Objects::nonNull)
            .forEach(o -> server.getClient().resource(o).create());
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject KubernetesClient client;

  @Test
  void servesTheSecretsCertificateWritesItsCaIntoTheWebhooksAndFollowsARenewal() throws Exception {
    io.gpuadmission.support.WebhookCalls.awaitReady(base);
    var secret = client.secrets().inNamespace(NAMESPACE).withName("gpu-admission-tls").get();
    var bundle = CertificateBundle.fromSecretData(secret.getData());
    var trusting = TlsClients.trustingAnything();

    var served = TlsClients.handshake(trusting, base.getPort(), "TLSv1.3");
    assertThat(served).isEqualTo(bundle.certificate());
    served.verify(bundle.signingCa().getPublicKey());
    var caBundle =
        Base64.getEncoder().encodeToString(bundle.caPem().getBytes(StandardCharsets.US_ASCII));
    var webhooks = client.admissionRegistration().v1();
    assertThat(
            webhooks.mutatingWebhookConfigurations().withName("gpu-admission").get().getWebhooks())
        .hasSize(2)
        .allSatisfy(w -> assertThat(w.getClientConfig().getCaBundle()).isEqualTo(caBundle));
    assertThat(
            webhooks
                .validatingWebhookConfigurations()
                .withName("gpu-admission")
                .get()
                .getWebhooks())
        .hasSize(4)
        .allSatisfy(w -> assertThat(w.getClientConfig().getCaBundle()).isEqualTo(caBundle));

    // Another replica renews: this one serves the new certificate from its next sync on.
    var renewed =
        CertificateIssuer.serving(
            bundle,
            bundle.caCertificates(),
            List.of(
                "gpu-admission.gpu-admission.svc",
                "gpu-admission",
                "gpu-admission.gpu-admission",
                "gpu-admission.gpu-admission.svc.cluster.local",
                "127.0.0.1"),
            Instant.now(),
            Duration.ofDays(365));
    client
        .secrets()
        .inNamespace(NAMESPACE)
        .resource(new SecretBuilder(secret).withData(renewed.toSecretData()).build())
        .update();
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () ->
                TlsClients.handshake(trusting, base.getPort(), "TLSv1.3")
                    .equals(renewed.certificate()));
  }

  /**
   * The service issues kube-scheduler's client certificate into Secret gpu-scheduler-client, and
   * the extender answers it (and nothing else). Through a CA change another replica writes, the
   * certificate a running scheduler holds keeps working while the reissued one works too; once the
   * old CA leaves the Secret, its certificate is refused.
   */
  @Test
  void issuesKubeSchedulersClientCertificateAndKeepsItWorkingThroughACaChange() throws Exception {
    io.gpuadmission.support.WebhookCalls.awaitReady(base);
    await().atMost(Duration.ofSeconds(20)).until(() -> client.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get() != null);
    var held = schedulerClient();
    assertThat(status(held)).isEqualTo(200);
    assertThat(status(io.gpuadmission.support.SchedulerCaller.context())).as("the dev CA is not trusted here").isEqualTo(401);
    assertThat(status(TlsClients.trustingAnything())).isEqualTo(401);

    // Another replica moves the serving certificate to a new CA; the old one stays trusted.
    var secret = client.secrets().inNamespace(NAMESPACE).withName("gpu-admission-tls").get();
    var old = CertificateBundle.fromSecretData(secret.getData());
    var next = CertificateIssuer.newCa("gpu-admission-ca", Instant.now(), Duration.ofDays(1825));
    var names = List.of("gpu-admission.gpu-admission.svc", "gpu-admission", "gpu-admission.gpu-admission",
        "gpu-admission.gpu-admission.svc.cluster.local", "127.0.0.1");
    var switched = CertificateIssuer.serving(next, List.of(next.signingCa(), old.signingCa()), names, Instant.now(), Duration.ofDays(365));
    client.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder(secret).withData(switched.toSecretData()).build()).update();
    await().atMost(Duration.ofSeconds(20)).until(() -> !schedulerClientCertificate().equals(heldCertificate(held)));
    var reissued = schedulerClient();
    assertThat(status(held)).as("the running scheduler's certificate").isEqualTo(200);
    assertThat(status(reissued)).as("the reissued certificate").isEqualTo(200);

    // The old CA leaves the trusted CAs: its certificate is refused from the next sync on.
    var latest = client.secrets().inNamespace(NAMESPACE).withName("gpu-admission-tls").get();
    var withoutOld = new CertificateBundle(List.of(next.signingCa()), next.caKey(), switched.certificate(), switched.key());
    client.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder(latest).withData(withoutOld.toSecretData()).build()).update();
    await().atMost(Duration.ofSeconds(20)).until(() -> status(held) == 401);
    assertThat(status(reissued)).isEqualTo(200);
  }

  private java.security.cert.X509Certificate heldCertificate(javax.net.ssl.SSLContext context) {
    return heldCertificates.get(context);
  }

  private final Map<javax.net.ssl.SSLContext, java.security.cert.X509Certificate> heldCertificates = new java.util.HashMap<>();

  /** A TLS client presenting the certificate now in Secret gpu-scheduler-client. */
  private javax.net.ssl.SSLContext schedulerClient() throws Exception {
    var data = client.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get().getData();
    var certificate = Pem.readCertificates(decode(data.get("tls.crt")));
    var context = io.gpuadmission.support.SchedulerCaller.context(certificate, Pem.readPrivateKey(decode(data.get("tls.key"))));
    heldCertificates.put(context, certificate.get(0));
    return context;
  }

  private java.security.cert.X509Certificate schedulerClientCertificate() throws Exception {
    return Pem.readCertificates(decode(client.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get().getData().get("tls.crt"))).get(0);
  }

  private int status(javax.net.ssl.SSLContext context) {
    return io.gpuadmission.support.SchedulerCaller.given(context).baseUri(base.toString()).get("/extender/inspect").statusCode();
  }

  private static String decode(String base64) {
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.US_ASCII);
  }
}
