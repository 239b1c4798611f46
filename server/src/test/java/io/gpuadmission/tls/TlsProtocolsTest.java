package io.gpuadmission.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * TLS 1.2 and 1.3 only, and no plaintext. The JDK client refuses to even offer TLS 1.1 (it is in
 * jdk.tls.disabledAlgorithms), so the old client is a hand-built TLS 1.1 ClientHello on a raw
 * socket, as a legacy client would send it.
 */
@QuarkusTest
class TlsProtocolsTest {
  private static final int ALERT = 21;
  private static final int HANDSHAKE = 22;
  private static final int PROTOCOL_VERSION = 70;
  private static final int HANDSHAKE_FAILURE = 40;
  private static final List<Integer> GCM_AND_CBC =
      List.of(0xc02f, 0xc030, 0xc013, 0xc014, 0x009c, 0x002f, 0x0035);

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  /** Warm-up over: a cold JVM on a busy machine can take seconds for its first handshakes. */
  @org.junit.jupiter.api.BeforeEach
  void awaitReady() {
    io.gpuadmission.support.WebhookCalls.awaitReady(base);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"TLSv1.2", "TLSv1.3"})
  void acceptsModernProtocols(String protocol) throws Exception {
    var devCa = Pem.readCertificates(Files.readString(Path.of("certs/dev/ca.crt")));
    SSLContext trusting = TlsClients.trusting(devCa);

    var certificate = TlsClients.handshake(trusting, base.getPort(), protocol);

    assertThat(certificate.getSubjectX500Principal().getName())
        .isEqualTo("CN=gpu-admission.gpu-admission.svc");
  }

  @ParameterizedTest(name = "TLS 1.{0}")
  @ValueSource(ints = {1, 0})
  void refusesTls11AndOlderWithAProtocolVersionAlert(int minor) throws Exception {
    var answer = exchange(clientHello(minor + 1, GCM_AND_CBC));

    assertThat(answer).as("the server's first bytes").isNotEmpty();
    assertThat(answer[0] & 0xff).as("record type (21 alert, 22 handshake)").isEqualTo(ALERT);
    assertThat(answer[6] & 0xff).as("alert description").isEqualTo(PROTOCOL_VERSION);
  }

  @Test
  void aTls12HelloBuiltTheSameWayIsAnswered() throws Exception {
    // The same hand-built hello with version 1.2 and a suite the server has: proves the refusal
    // above is about the version, not about how the hello was made.
    var answer = exchange(clientHello(3, GCM_AND_CBC));

    assertThat(answer[0] & 0xff).isEqualTo(HANDSHAKE);
  }

  @Test
  void refusesTls12WithOnlyCbcSuites() throws Exception {
    var answer = exchange(clientHello(3, List.of(0xc013, 0xc014, 0x002f, 0x0035)));

    assertThat(answer[0] & 0xff).isEqualTo(ALERT);
    assertThat(answer[6] & 0xff).as("alert description").isEqualTo(HANDSHAKE_FAILURE);
  }

  @Test
  void refusesPlaintextHttpOnTheTlsPort() throws Exception {
    var request =
        "POST /mutate HTTP/1.1\r\n"
            + "Host: localhost\r\n"
            + "Content-Type: application/json\r\n"
            + "Content-Length: 2\r\n\r\n"
            + "{}";

    var answer = exchange(request.getBytes(StandardCharsets.US_ASCII));

    assertThat(new String(answer, StandardCharsets.US_ASCII))
        .doesNotContain("HTTP/1.1")
        .doesNotContain("allowed");
  }

  /**
   * Sends {@code bytes} on a new connection; returns the first bytes back (a record header and
   * alert), or none if it closes.
   */
  private byte[] exchange(byte[] bytes) throws IOException {
    try (var socket = new Socket("localhost", base.getPort())) {
      socket.setSoTimeout(30_000);
      socket.getOutputStream().write(bytes);
      socket.getOutputStream().flush();
      var answer = new ByteArrayOutputStream();
      var buffer = new byte[4096];
      try {
        for (int n; answer.size() < 7 && (n = socket.getInputStream().read(buffer)) > 0; ) {
          answer.write(buffer, 0, n);
        }
      } catch (java.net.SocketTimeoutException | SocketException closed) {
        // the server stopped talking
      }
      return answer.toByteArray();
    }
  }

  /**
   * A ClientHello for TLS 1.{@code minor - 1} offering {@code suites}, with the extensions
   * ECDHE-RSA needs (groups, point formats, signature algorithms).
   */
  static byte[] clientHello(int minor, List<Integer> suites) {
    var body = new ByteArrayOutputStream();
    body.write(3);
    body.write(minor);
    var random = new byte[32];
    Arrays.fill(random, (byte) 7);
    body.writeBytes(random);
    body.write(0); // no session id
    u16(body, suites.size() * 2);
    suites.forEach(s -> u16(body, s));
    body.write(1);
    body.write(0); // null compression
    var extensions = new ByteArrayOutputStream();
    extension(extensions, 0x000a, new byte[] {0, 4, 0, 0x17, 0, 0x18}); // groups: P-256, P-384
    extension(extensions, 0x000b, new byte[] {1, 0}); // point formats: uncompressed
    extension(
        extensions,
        0x000d,
        new byte[] {0, 6, 4, 1, 5, 1, 8, 4}); // rsa_pkcs1_sha256/384, rsa_pss_rsae_sha256
    u16(body, extensions.size());
    body.writeBytes(extensions.toByteArray());

    var handshake = new ByteArrayOutputStream();
    handshake.write(1); // ClientHello
    handshake.write(0);
    u16(handshake, body.size());
    handshake.writeBytes(body.toByteArray());

    var record = new ByteArrayOutputStream();
    record.write(HANDSHAKE);
    record.write(3);
    record.write(1); // record layer version, as real clients send it
    u16(record, handshake.size());
    record.writeBytes(handshake.toByteArray());
    return record.toByteArray();
  }

  private static void extension(ByteArrayOutputStream out, int type, byte[] data) {
    u16(out, type);
    u16(out, data.length);
    out.writeBytes(data);
  }

  private static void u16(ByteArrayOutputStream out, int value) {
    out.write((value >> 8) & 0xff);
    out.write(value & 0xff);
  }
}
