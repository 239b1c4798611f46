package io.gpuadmission.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.gpuadmission.tls.CertificateSecretStore.Action;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/** The install without cert-manager, on the fabric8 mock API server in CRUD mode. */
@EnableKubernetesMockClient(crud = true)
class SelfManagedCertificatesTest {
  private static final String NAMESPACE = "gpu-admission";
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final TestCertificateConfig CONFIG = new TestCertificateConfig();

  KubernetesClient client;

  @Test
  void createsCaAndServingCertificateInASecretWhenNoneExists() throws Exception {
    var outcome = store(T0).sync();

    assertThat(outcome.action()).isEqualTo(Action.CREATED);
    var secret = client.secrets().inNamespace(NAMESPACE).withName("gpu-admission-tls").get();
    assertThat(secret.getType()).isEqualTo("kubernetes.io/tls");
    assertThat(secret.getData()).containsOnlyKeys("ca.crt", "ca.key", "tls.crt", "tls.key");
    var stored = CertificateBundle.fromSecretData(secret.getData());
    assertThat(stored.certificate()).isEqualTo(outcome.bundle().certificate());
    var certificate = stored.certificate();
    certificate.verify(stored.signingCa().getPublicKey());
    assertThat(certificate.getSubjectAlternativeNames())
        .extracting(n -> (Object) n.get(1))
        .containsExactly(
            "gpu-admission.gpu-admission.svc",
            "gpu-admission",
            "gpu-admission.gpu-admission",
            "gpu-admission.gpu-admission.svc.cluster.local",
            (Object) "127.0.0.1");
    assertThat(certificate.getNotAfter().toInstant()).isEqualTo(T0.plus(Duration.ofDays(365)));
    assertThat(stored.signingCa().getBasicConstraints()).isZero();
    assertThat(ServedCertificate.matches(stored.key(), stored.certificate())).isTrue();
    assertThat(ServedCertificate.matches(stored.caKey(), stored.certificate())).isFalse();

    var again = store(T0.plus(Duration.ofDays(1))).sync();
    assertThat(again.action()).isEqualTo(Action.UNCHANGED);
    assertThat(again.bundle().certificate()).isEqualTo(certificate);
  }

  @Test
  void writesTheCaIntoOwnWebhooksOnlyAndOnlyWhenItDiffers() throws Exception {
    for (var object : manifests("base/webhooks.yaml")) {
      client.resource(object).create();
    }
    var foreign =
        new MutatingWebhookConfigurationBuilder()
            .withNewMetadata()
            .withName("someone-else")
            .endMetadata()
            .addNewWebhook()
            .withName("x.example.com")
            .withNewClientConfig()
            .withNewService()
            .withName("gpu-admission")
            .withNamespace("other")
            .endService()
            .endClientConfig()
            .withSideEffects("None")
            .withAdmissionReviewVersions("v1")
            .endWebhook()
            .build();
    client.resource(foreign).create();
    var bundle = store(T0).sync().bundle();
    var injector = new CaBundleInjector(client, "gpu-admission", NAMESPACE, "gpu-admission");

    assertThat(injector.inject(bundle.caPem())).isEqualTo(new CaBundleInjector.Injection(6, 0));

    var expected =
        Base64.getEncoder().encodeToString(bundle.caPem().getBytes(StandardCharsets.US_ASCII));
    var mutating =
        client
            .admissionRegistration()
            .v1()
            .mutatingWebhookConfigurations()
            .withName("gpu-admission")
            .get();
    var validating =
        client
            .admissionRegistration()
            .v1()
            .validatingWebhookConfigurations()
            .withName("gpu-admission")
            .get();
    assertThat(mutating.getWebhooks())
        .allSatisfy(w -> assertThat(w.getClientConfig().getCaBundle()).isEqualTo(expected));
    assertThat(validating.getWebhooks())
        .allSatisfy(w -> assertThat(w.getClientConfig().getCaBundle()).isEqualTo(expected));
    assertThat(
            client
                .admissionRegistration()
                .v1()
                .mutatingWebhookConfigurations()
                .withName("someone-else")
                .get()
                .getWebhooks()
                .get(0)
                .getClientConfig()
                .getCaBundle())
        .isNull();
    var versions =
        mutating.getMetadata().getResourceVersion()
            + "/"
            + validating.getMetadata().getResourceVersion();

    assertThat(injector.inject(bundle.caPem()).changedWebhooks())
        .as("a second replica that agrees writes nothing")
        .isZero();
    assertThat(
            client
                    .admissionRegistration()
                    .v1()
                    .mutatingWebhookConfigurations()
                    .withName("gpu-admission")
                    .get()
                    .getMetadata()
                    .getResourceVersion()
                + "/"
                + client
                    .admissionRegistration()
                    .v1()
                    .validatingWebhookConfigurations()
                    .withName("gpu-admission")
                    .get()
                    .getMetadata()
                    .getResourceVersion())
        .isEqualTo(versions);
  }

  @Test
  void reportsWebhookConfigurationsThatDoNotExistYet() throws Exception {
    var bundle = store(T0).sync().bundle();

    var injection =
        new CaBundleInjector(client, "gpu-admission", NAMESPACE, "gpu-admission")
            .inject(bundle.caPem());

    assertThat(injection).isEqualTo(new CaBundleInjector.Injection(0, 2));
  }

  @Test
  void renewsTheServingCertificateWhenAThirdOfItsLifeIsLeftAndKeepsTheCa() throws Exception {
    var first = store(T0).sync().bundle();

    assertThat(store(T0.plus(Duration.ofDays(240))).sync().action()).isEqualTo(Action.UNCHANGED);
    var renewed = store(T0.plus(Duration.ofDays(250))).sync();

    assertThat(renewed.action()).isEqualTo(Action.RENEWED);
    assertThat(renewed.bundle().certificate().getSerialNumber())
        .isNotEqualTo(first.certificate().getSerialNumber());
    assertThat(renewed.bundle().certificate().getNotAfter().toInstant())
        .isEqualTo(T0.plus(Duration.ofDays(250 + 365)));
    assertThat(renewed.bundle().caCertificates()).containsExactly(first.signingCa());
    renewed.bundle().certificate().verify(first.signingCa().getPublicKey());
    var stored =
        CertificateBundle.fromSecretData(
            client.secrets().inNamespace(NAMESPACE).withName("gpu-admission-tls").get().getData());
    assertThat(stored.certificate()).isEqualTo(renewed.bundle().certificate());
  }

  @Test
  void changesCaInTwoStepsSoThatEveryServingCertificateIsSignedByACaTrustedForTheOverlap() throws Exception {
    var caA = store(T0).sync().bundle().signingCa();
    var servingBefore = store(day(1200)).sync().bundle();
    assertThat(store(day(1369)).sync().action()).as("the CA ends in 456 days: more than 365 + 90").isEqualTo(Action.UNCHANGED);

    // Step 1: the next CA joins the trusted CAs; the serving certificate stays as it was.
    var introduced = store(day(1371)).sync();
    assertThat(introduced.action()).isEqualTo(Action.RENEWED);
    var caB = introduced.bundle().nextCa().orElseThrow();
    assertThat(introduced.bundle().caCertificates()).containsExactly(caA, caB);
    assertThat(introduced.bundle().signingCa()).isEqualTo(caA);
    assertThat(introduced.bundle().certificate()).isEqualTo(servingBefore.certificate());
    assertThat(storedData()).containsKeys("ca.crt", "ca.key", "ca-next.key", "tls.crt", "tls.key");
    var caBundleOfStep1 = introduced.bundle().caCertificates();
    assertThat(store(day(1371)).caSwitch(introduced.bundle())).contains(caB.getNotBefore().toInstant().plus(Duration.ofDays(90)));

    // Within the overlap a serving renewal still comes from the current CA, the next one waits.
    var renewedInOverlap = store(day(1450)).sync();
    assertThat(renewedInOverlap.action()).isEqualTo(Action.RENEWED);
    assertThat(renewedInOverlap.bundle().certificate()).isNotEqualTo(servingBefore.certificate());
    assertThat(renewedInOverlap.bundle().signingCa()).isEqualTo(caA);
    assertThat(renewedInOverlap.bundle().nextCa()).contains(caB);
    assertThat(store(day(1460)).sync().action()).isEqualTo(Action.UNCHANGED);

    // Step 2: 90 days after it joined, the next CA signs; the previous one stays trusted.
    var switched = store(day(1461)).sync();
    assertThat(switched.action()).isEqualTo(Action.RENEWED);
    assertThat(switched.bundle().signingCa()).isEqualTo(caB);
    assertThat(switched.bundle().caCertificates()).containsExactly(caB, caA);
    assertThat(switched.bundle().nextCa()).isEmpty();
    assertThat(store(day(1461)).caSwitch(switched.bundle())).isEmpty();
    assertThat(storedData()).doesNotContainKey("ca-next.key");
    assertThat(store(day(1462)).sync().action()).isEqualTo(Action.UNCHANGED);

    // Whoever took the caBundle of step 1 (the API server at once, a restarted scheduler within
    // the overlap) trusts every serving certificate from then on; whoever kept the bundle of
    // before step 1 would not trust the certificate of step 2: the overlap is its time to restart.
    assertThat(trusts(caBundleOfStep1, introduced.bundle().certificate(), day(1371))).isTrue();
    assertThat(trusts(caBundleOfStep1, renewedInOverlap.bundle().certificate(), day(1450))).isTrue();
    assertThat(trusts(caBundleOfStep1, switched.bundle().certificate(), day(1461))).isTrue();
    assertThat(trusts(List.of(caA), switched.bundle().certificate(), day(1461))).isFalse();
  }

  @Test
  void aCaThatEndsBeforeTheOverlapIsOverHandsOverTheDayBefore() throws Exception {
    var caA = store(T0).sync().bundle().signingCa();
    // Introduced late (a replica was down): fewer than 90 days left.
    var introduced = store(day(1800)).sync();
    var caB = introduced.bundle().nextCa().orElseThrow();

    assertThat(store(day(1800)).caSwitch(introduced.bundle())).contains(T0.plus(Duration.ofDays(1824)));
    assertThat(store(day(1820)).sync().action()).isEqualTo(Action.UNCHANGED);
    var switched = store(T0.plus(Duration.ofDays(1825)).minus(Duration.ofHours(23))).sync();

    assertThat(switched.bundle().signingCa()).isEqualTo(caB);
    assertThat(switched.bundle().caCertificates()).containsExactly(caB, caA);
  }

  @Test
  void replacesASecretThatHoldsNoUsableCertificate() throws Exception {
    client
        .secrets()
        .inNamespace(NAMESPACE)
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName("gpu-admission-tls")
                .withNamespace(NAMESPACE)
                .endMetadata()
                .addToData(
                    "tls.crt",
                    Base64.getEncoder()
                        .encodeToString("not a certificate".getBytes(StandardCharsets.US_ASCII)))
                .build())
        .create();

    var outcome = store(T0).sync();

    assertThat(outcome.action()).isEqualTo(Action.RENEWED);
    assertThat(
            client.secrets().inNamespace(NAMESPACE).withName("gpu-admission-tls").get().getData())
        .containsKey("ca.key");
  }

  @Test
  void makesANewCaWhenTheStoredCaKeyIsNotTheCas() throws Exception {
    var good = store(T0).sync().bundle();
    var stranger = CertificateIssuer.newCa("stranger", T0, Duration.ofDays(1825));
    var broken =
        new CertificateBundle(good.caCertificates(), stranger.caKey(), good.certificate(), good.key());
    var secrets = client.secrets().inNamespace(NAMESPACE);
    var secret = secrets.withName("gpu-admission-tls").get();
    secrets.resource(new io.fabric8.kubernetes.api.model.SecretBuilder(secret).withData(broken.toSecretData()).build()).update();

    var outcome = store(T0.plus(Duration.ofDays(1))).sync();

    assertThat(outcome.action()).isEqualTo(Action.RENEWED);
    assertThat(outcome.bundle().signingCa()).isNotEqualTo(good.signingCa());
    outcome.bundle().certificate().verify(outcome.bundle().signingCa().getPublicKey());
    assertThat(store(T0.plus(Duration.ofDays(2))).sync().action()).isEqualTo(Action.UNCHANGED);
  }

  @Test
  void aSecondReplicaCreatingAtTheSameMomentAdoptsTheFirstOnesCertificate() throws Exception {
    var first = store(T0);
    var firstOutcome = new CertificateSecretStore.Outcome[1];
    // The second replica reads "no Secret", then the first one creates it before the second writes.
    var second = store(new RacingClock(T0, () -> firstOutcome[0] = syncUnchecked(first)));

    var outcome = second.sync();

    assertThat(firstOutcome[0].action()).isEqualTo(Action.CREATED);
    assertThat(outcome.action()).isEqualTo(Action.ADOPTED);
    assertThat(outcome.bundle().certificate()).isEqualTo(firstOutcome[0].bundle().certificate());
    var stored =
        CertificateBundle.fromSecretData(
            client.secrets().inNamespace(NAMESPACE).withName("gpu-admission-tls").get().getData());
    assertThat(stored.certificate()).isEqualTo(firstOutcome[0].bundle().certificate());
  }

  @Test
  void twoReplicasRenewingAtTheSameMomentEndWithOneCertificate() throws Exception {
    store(T0).sync();
    var due = T0.plus(Duration.ofDays(300));
    var firstOutcome = new CertificateSecretStore.Outcome[1];
    var first = store(due);
    var second = store(new RacingClock(due, () -> firstOutcome[0] = syncUnchecked(first)));

    var outcome = second.sync();

    assertThat(firstOutcome[0].action()).isEqualTo(Action.RENEWED);
    assertThat(outcome.action()).isEqualTo(Action.ADOPTED);
    assertThat(outcome.bundle().certificate()).isEqualTo(firstOutcome[0].bundle().certificate());
    assertThat(store(due).sync().action())
        .as("nothing left to do for either")
        .isEqualTo(Action.UNCHANGED);
  }

  private static Instant day(int days) {
    return T0.plus(Duration.ofDays(days));
  }

  private java.util.Map<String, String> storedData() {
    return client.secrets().inNamespace(NAMESPACE).withName("gpu-admission-tls").get().getData();
  }

  /** PKIX path validation of {@code certificate} at {@code when}, trusting exactly {@code cas}. */
  private static boolean trusts(List<java.security.cert.X509Certificate> cas, java.security.cert.X509Certificate certificate, Instant when)
      throws java.security.GeneralSecurityException {
    var anchors = new java.util.HashSet<java.security.cert.TrustAnchor>();
    cas.forEach(ca -> anchors.add(new java.security.cert.TrustAnchor(ca, null)));
    var parameters = new java.security.cert.PKIXParameters(anchors);
    parameters.setRevocationEnabled(false);
    parameters.setDate(java.util.Date.from(when));
    var path = java.security.cert.CertificateFactory.getInstance("X.509").generateCertPath(List.of(certificate));
    try {
      java.security.cert.CertPathValidator.getInstance("PKIX").validate(path, parameters);
      return true;
    } catch (java.security.cert.CertPathValidatorException e) {
      return false;
    }
  }

  private CertificateSecretStore store(Instant now) {
    return store(Clock.fixed(now, ZoneOffset.UTC));
  }

  private CertificateSecretStore store(Clock clock) {
    return new CertificateSecretStore(client, NAMESPACE, CONFIG, clock);
  }

  private static CertificateSecretStore.Outcome syncUnchecked(CertificateSecretStore store) {
    try {
      return store.sync();
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static List<HasMetadata> manifests(String file) throws java.io.IOException {
    var parsed =
        new io.fabric8.kubernetes.client.utils.KubernetesSerialization()
            .unmarshal(Files.readString(Path.of("manifests", file)));
    return ((List<HasMetadata>) parsed).stream().filter(Objects::nonNull).toList();
  }
}
