package io.gpuadmission.tls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Certificate rotation without restart, over HTTPS: while a client keeps posting reviews, the
 * certificate files are replaced, then a certificate is installed from memory as the self-managed
 * path does; new connections get the new certificate within the check period and no request fails.
 */
@QuarkusTest
@TestProfile(CertificateRotationTest.RotatingFiles.class)
class CertificateRotationTest {
  static final Path DIR = Path.of("target", "rotation-tls");
  private static final Duration CHECK_PERIOD = Duration.ofMillis(200);
  static CertificateBundle firstCa;

  /** Serves a localhost certificate of a CA made for this test, from files the test may replace. */
  public static final class RotatingFiles implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      try {
        firstCa = newCa("rotation-ca-1");
        write(serving(firstCa));
      } catch (GeneralSecurityException | IOException e) {
        throw new IllegalStateException(e);
      }
      return Map.of(
          "gpu-admission.tls.cert-file", DIR.resolve("tls.crt").toString(),
          "gpu-admission.tls.key-file", DIR.resolve("tls.key").toString(),
          "gpu-admission.tls.check-period", CHECK_PERIOD.toMillis() + "ms");
    }
  }

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject ServedCertificate served;

  @Test
  void newConnectionsGetTheReplacedCertificateAndNoRequestFails() throws Exception {
    var secondCa = newCa("rotation-ca-2");
    var thirdCa = newCa("rotation-ca-3");
    var trusting =
        TlsClients.trusting(
            List.of(firstCa.signingCa(), secondCa.signingCa(), thirdCa.signingCa()));
    var port = base.getPort();
    awaitReady();
    assertThat(TlsClients.handshake(trusting, port, "TLSv1.3").getIssuerX500Principal().getName())
        .isEqualTo("CN=rotation-ca-1");

    try (var load = new Load(trusting, URI.create("https://localhost:" + port + "/mutate"))) {
      load.awaitRequests(20);

      // An operator (or the kubelet, for a mounted Secret) replaces the files.
      var byHand = serving(secondCa);
      write(byHand);
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> TlsClients.handshake(trusting, port, "TLSv1.3").equals(byHand.certificate()));
      load.awaitRequests(load.succeeded() + 20);

      // The self-managed path: the Secret's certificate is served at once, no file, no wait.
      var renewed = serving(thirdCa);
      assertThat(served.install(renewed)).isTrue();
      assertThat(TlsClients.handshake(trusting, port, "TLSv1.2")).isEqualTo(renewed.certificate());
      assertThat(served.install(renewed)).as("the same pair again is not reloaded").isFalse();
      load.awaitRequests(load.succeeded() + 20);

      load.stop();
      assertThat(load.failures()).as("requests that failed across the switches").isEmpty();
    }
  }

  @Test
  void aHalfReplacedPairIsNotServed() throws Exception {
    awaitReady();
    var trusting = TlsClients.trustingAnything();
    var before = TlsClients.handshake(trusting, base.getPort(), "TLSv1.3");
    assertThat(before).isEqualTo(served.served());
    var other = serving(newCa("rotation-ca-other"));
    var key = DIR.resolve("tls.key");
    var original = Files.readAllBytes(key);
    try {
      Files.writeString(key.resolveSibling("tls.key.tmp"), other.keyPem());
      Files.move(
          key.resolveSibling("tls.key.tmp"),
          key,
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);

      assertThat(served.check())
          .as("a key that does not match the certificate is not loaded")
          .isFalse();
      assertThat(TlsClients.handshake(trusting, base.getPort(), "TLSv1.3")).isEqualTo(before);
    } finally {
      Files.write(key, original);
    }
  }

  /** A certificate file with intermediates (cert-manager writes leaf then CA) is served whole. */
  @Test
  void servesTheWholeChainTheFileHolds() throws Exception {
    awaitReady();
    var crt = DIR.resolve("tls.crt");
    var key = DIR.resolve("tls.key");
    var originalCrt = Files.readAllBytes(crt);
    var originalKey = Files.readAllBytes(key);
    var leaf = serving(newCa("rotation-ca-chain"));
    try {
      Files.writeString(key, leaf.keyPem());
      Files.writeString(crt, leaf.certificatePem() + leaf.caPem());

      assertThat(served.check()).isTrue();
      assertThat(TlsClients.handshakeChain(TlsClients.trustingAnything(), base.getPort(), "TLSv1.3"))
          .containsExactly(leaf.certificate(), leaf.signingCa());
    } finally {
      Files.write(key, originalKey);
      Files.write(crt, originalCrt);
      served.check();
    }
  }

  /** Warm-up over: a cold JVM on a busy machine can take seconds for its first handshakes. */
  private void awaitReady() {
    io.gpuadmission.support.WebhookCalls.awaitReady(base);
  }

  static CertificateBundle newCa(String name) throws GeneralSecurityException {
    return CertificateIssuer.newCa(name, Instant.now(), Duration.ofDays(2));
  }

  static CertificateBundle serving(CertificateBundle ca) throws GeneralSecurityException {
    return CertificateIssuer.serving(
        ca, ca.caCertificates(), List.of("localhost"), Instant.now(), Duration.ofDays(1));
  }

  /** Writes key then certificate, each atomically, as make-dev-certs.sh does. */
  static void write(CertificateBundle bundle) throws IOException {
    Files.createDirectories(DIR);
    for (var file :
        List.of(
            Map.entry("tls.key", bundle.keyPem()), Map.entry("tls.crt", bundle.certificatePem()))) {
      var temporary = DIR.resolve(file.getKey() + ".tmp");
      Files.writeString(temporary, file.getValue());
      Files.move(
          temporary,
          DIR.resolve(file.getKey()),
          StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** One thread posting a CPU-pod review in a loop, bounded in count, recording any failure. */
  private static final class Load implements AutoCloseable {
    private static final int MAX_REQUESTS = 20_000;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicInteger succeeded = new AtomicInteger();
    private final List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    private final Thread thread;

    Load(javax.net.ssl.SSLContext trusting, URI uri) {
      var client =
          HttpClient.newBuilder()
              .sslContext(trusting)
              .connectTimeout(Duration.ofSeconds(2))
              .build();
      var body = sample();
      thread =
          new Thread(
              () -> {
                for (int i = 0; i < MAX_REQUESTS && running.get(); i++) {
                  try {
                    var request =
                        HttpRequest.newBuilder(uri)
                            .timeout(Duration.ofSeconds(30))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                            .build();
                    var response = client.send(request, HttpResponse.BodyHandlers.ofString());
                    if (response.statusCode() == 200
                        && response.body().contains("\"allowed\":true")) {
                      succeeded.incrementAndGet();
                    } else {
                      failures.add("HTTP " + response.statusCode() + ": " + response.body());
                    }
                  } catch (IOException e) {
                    failures.add(e.toString());
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "rotation-load");
      thread.start();
    }

    int succeeded() {
      return succeeded.get();
    }

    List<String> failures() {
      return List.copyOf(failures);
    }

    void awaitRequests(int count) {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> succeeded.get() >= count || !failures.isEmpty() || !thread.isAlive());
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(10_000);
    }

    @Override
    public void close() {
      try {
        stop();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private static byte[] sample() {
      try (InputStream in =
          CertificateRotationTest.class.getResourceAsStream("/warmup/cpu-only.json")) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8)
            .getBytes(StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
