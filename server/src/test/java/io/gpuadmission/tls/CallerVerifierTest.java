package io.gpuadmission.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.tls.CallerVerifier.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Who may call the extender: a client certificate of a trusted CA that names an allowed caller. */
class CallerVerifierTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final List<String> SCHEDULER = List.of("system:kube-scheduler");

  @Test
  void acceptsKubeSchedulersCertificateFromTheTrustedCa() throws Exception {
    var ca = CertificateIssuer.newCa("gpu-admission-ca", T0, Duration.ofDays(1825));
    var caller = client(ca, "system:kube-scheduler");

    var verdict = new CallerVerifier(ca.caCertificates(), SCHEDULER).verify(List.of(caller.certificate()), T0.plusSeconds(60));

    assertThat(verdict).isEqualTo(new Verdict.Accepted(caller.certificate()));
  }

  @Test
  void refusesNoCertificateAnotherCaAnExpiredOneAServingOneAndAnotherName() throws Exception {
    var ca = CertificateIssuer.newCa("gpu-admission-ca", T0, Duration.ofDays(1825));
    var other = CertificateIssuer.newCa("other-ca", T0, Duration.ofDays(1825));
    var verifier = new CallerVerifier(ca.caCertificates(), SCHEDULER);
    var now = T0.plusSeconds(60);

    assertThat(verifier.verify(List.of(), now))
        .isEqualTo(new Verdict.Refused(401, "no_certificate", "the extender takes calls from kube-scheduler only: present its client certificate"
            + " (tlsConfig certFile/keyFile in the extender stanza)"));
    assertThat(verifier.verify(List.of(client(other, "system:kube-scheduler").certificate()), now))
        .isInstanceOfSatisfying(Verdict.Refused.class, r -> {
          assertThat(r.status()).isEqualTo(401);
          assertThat(r.kind()).isEqualTo("untrusted");
        });
    assertThat(verifier.verify(List.of(client(ca, "system:kube-scheduler").certificate()), T0.plus(Duration.ofDays(2))))
        .isInstanceOfSatisfying(Verdict.Refused.class, r -> assertThat(r.kind()).isEqualTo("untrusted"));
    var serving = CertificateIssuer.serving(ca, ca.caCertificates(), List.of("gpu-admission.gpu-admission.svc"), T0, Duration.ofDays(1));
    assertThat(verifier.verify(List.of(serving.certificate()), now))
        .isEqualTo(new Verdict.Refused(403, "not_client", "certificate \"CN=gpu-admission.gpu-admission.svc\" is not meant for client authentication"));
    assertThat(verifier.verify(List.of(client(ca, "system:node:gpu-1").certificate()), now))
        .isEqualTo(new Verdict.Refused(403, "name", "client certificate \"CN=system:node:gpu-1\" is not one of the allowed callers [system:kube-scheduler]"));
    assertThat(new CallerVerifier(List.of(), SCHEDULER).verify(List.of(client(ca, "system:kube-scheduler").certificate()), now))
        .isEqualTo(new Verdict.Refused(401, "untrusted", "no client CA is trusted yet"));
  }

  @Test
  void anyNameWithAStarAndAConfiguredName() throws Exception {
    var ca = CertificateIssuer.newCa("gpu-admission-ca", T0, Duration.ofDays(1825));
    var node = client(ca, "my-scheduler").certificate();

    assertThat(new CallerVerifier(ca.caCertificates(), List.of("*")).verify(List.of(node), T0)).isInstanceOf(Verdict.Accepted.class);
    assertThat(new CallerVerifier(ca.caCertificates(), List.of("system:kube-scheduler", "my-scheduler")).verify(List.of(node), T0))
        .isInstanceOf(Verdict.Accepted.class);
  }

  @Test
  void duringACaChangeBothTheOldAndTheNewCasCallersAreAccepted() throws Exception {
    var old = CertificateIssuer.newCa("gpu-admission-ca", T0, Duration.ofDays(1825));
    var next = CertificateIssuer.newCa("gpu-admission-ca", T0.plus(Duration.ofDays(1370)), Duration.ofDays(1825));
    var oldCaller = client(old, "system:kube-scheduler").certificate();
    var newCaller = client(next, "system:kube-scheduler").certificate();

    var both = new CallerVerifier(List.of(next.signingCa(), old.signingCa()), SCHEDULER);
    assertThat(both.verify(List.of(oldCaller), T0)).isInstanceOf(Verdict.Accepted.class);
    assertThat(both.verify(List.of(newCaller), T0.plus(Duration.ofDays(1370)).plusSeconds(3600))).isInstanceOf(Verdict.Accepted.class);
    // Once the old CA has left the trusted CAs, its callers are refused.
    assertThat(new CallerVerifier(List.of(next.signingCa()), SCHEDULER).verify(List.of(oldCaller), T0))
        .isInstanceOf(Verdict.Refused.class);
  }

  private static CertificateBundle client(CertificateBundle ca, String name) throws Exception {
    return CertificateIssuer.client(ca, ca.caCertificates(), name, ca.signingCa().getNotBefore().toInstant().plusSeconds(300), Duration.ofDays(1));
  }
}
