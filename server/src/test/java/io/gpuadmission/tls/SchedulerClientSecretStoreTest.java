package io.gpuadmission.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * kube-scheduler's client certificate, issued by the self-managed CA into the Secret the second
 * scheduler mounts, on the fabric8 mock API server: issued once, reissued by the next CA after a CA
 * change while the certificate the running scheduler holds stays accepted.
 */
@EnableKubernetesMockClient(crud = true)
class SchedulerClientSecretStoreTest {
  private static final String NAMESPACE = "gpu-admission";
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final CertificateConfig TLS = new TestCertificateConfig();
  private static final List<String> SCHEDULER = List.of("system:kube-scheduler");

  KubernetesClient client;

  @Test
  void issuesAClientCertificateForKubeSchedulerOnceAndKeepsIt() throws Exception {
    var serving = renewal().fresh(null, T0);

    assertThat(store(T0).sync(serving)).isTrue();

    var secret = client.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get();
    assertThat(secret.getType()).isEqualTo("kubernetes.io/tls");
    assertThat(secret.getData()).containsOnlyKeys("ca.crt", "tls.crt", "tls.key");
    assertThat(text(secret.getData().get("ca.crt"))).isEqualTo(serving.caPem());
    var issued = certificate(secret.getData().get("tls.crt"));
    assertThat(issued.getSubjectX500Principal().getName()).isEqualTo("CN=system:kube-scheduler");
    assertThat(issued.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
    assertThat(issued.getNotAfter().toInstant()).isEqualTo(T0.plus(Duration.ofDays(365)));
    assertThat(ServedCertificate.matches(Pem.readPrivateKey(text(secret.getData().get("tls.key"))), issued)).isTrue();
    assertThat(new CallerVerifier(serving.caCertificates(), SCHEDULER).verify(List.of(issued), T0))
        .isEqualTo(new CallerVerifier.Verdict.Accepted(issued));

    assertThat(store(T0.plus(Duration.ofDays(200))).sync(serving)).isFalse();
    // With a third of its life left it is reissued; the previous one stays valid until it ends.
    assertThat(store(T0.plus(Duration.ofDays(250))).sync(serving)).isTrue();
    var renewed = certificate(client.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get().getData().get("tls.crt"));
    assertThat(renewed).isNotEqualTo(issued);
    var verifier = new CallerVerifier(serving.caCertificates(), SCHEDULER);
    assertThat(verifier.verify(List.of(issued), T0.plus(Duration.ofDays(250)))).isInstanceOf(CallerVerifier.Verdict.Accepted.class);
    assertThat(verifier.verify(List.of(renewed), T0.plus(Duration.ofDays(250)))).isInstanceOf(CallerVerifier.Verdict.Accepted.class);
  }

  @Test
  void aCaChangeKeepsTheRunningSchedulersCertificateAcceptedAndReissuesItByTheNextCa() throws Exception {
    var renewal = renewal();
    var serving = renewal.fresh(null, T0);
    var introducedAt = T0.plus(Duration.ofDays(1825 - 365 - 90 + 1));
    store(introducedAt.minus(Duration.ofDays(1))).sync(serving);
    var held = certificate(client.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get().getData().get("tls.crt"));

    // The next CA joins the trusted CAs (ca.crt) while the current one signs: the Secret's ca.crt
    // follows for the scheduler's caFile; its client certificate stays.
    var introduced = renewal.next(serving, introducedAt).orElseThrow();
    assertThat(introduced.nextCa()).isPresent();
    assertThat(store(introducedAt).sync(introduced)).isTrue();
    var secret = client.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get();
    assertThat(text(secret.getData().get("ca.crt"))).isEqualTo(introduced.caPem());
    assertThat(certificate(secret.getData().get("tls.crt"))).isEqualTo(held);

    // The next CA signs: the client certificate is reissued by it; both are accepted by the CAs now trusted.
    var switchAt = renewal.caSwitch(introduced).orElseThrow().plusSeconds(1);
    var switched = renewal.next(introduced, switchAt).orElseThrow();
    assertThat(switched.signingCa()).isEqualTo(introduced.nextCa().orElseThrow());
    assertThat(store(switchAt).sync(switched)).isTrue();
    var reissued = certificate(client.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get().getData().get("tls.crt"));
    reissued.verify(switched.signingCa().getPublicKey());
    var verifier = new CallerVerifier(switched.caCertificates(), SCHEDULER);
    assertThat(verifier.verify(List.of(reissued), switchAt)).isInstanceOf(CallerVerifier.Verdict.Accepted.class);
    assertThat(verifier.verify(List.of(held), switchAt)).isInstanceOf(CallerVerifier.Verdict.Accepted.class);
  }

  private SchedulerClientSecretStore store(Instant now) {
    return new SchedulerClientSecretStore(client, NAMESPACE, CALLERS, Clock.fixed(now, ZoneOffset.UTC));
  }

  private static CertificateRenewal renewal() {
    return new CertificateRenewal(List.of("gpu-admission.gpu-admission.svc"), TLS.servingValidity(), TLS.caValidity(), TLS.caOverlap());
  }

  private static final CallerAuthConfig CALLERS =
      new CallerAuthConfig() {
        @Override
        public boolean required() {
          return true;
        }

        @Override
        public Optional<Path> caFile() {
          return Optional.empty();
        }

        @Override
        public List<String> names() {
          return SCHEDULER;
        }

        @Override
        public String secretName() {
          return "gpu-scheduler-client";
        }

        @Override
        public Duration validity() {
          return Duration.ofDays(365);
        }
      };

  private static String text(String base64) {
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.US_ASCII);
  }

  private static X509Certificate certificate(String base64) throws Exception {
    return Pem.readCertificates(text(base64)).get(0);
  }
}
