package io.gpuadmission.node.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.gpuadmission.testing.DevCertificates;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's HTTP/1.1: what it sends, how it frames what it reads (chunked, Content-Length, up to
 * the close), what it refuses, its timeouts, a watch ended from another thread, and HTTPS with the
 * service account's CA and the host name checked.
 */
class Http1ClientTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  @TempDir Path serviceAccount;
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (var c : open.reversed()) {
      c.close();
    }
  }

  @Test
  void aRequestIsSentAsHttp11WithItsHeadersAndBody() throws Exception {
    var requests = new LinkedBlockingQueue<String>();
    var server = rawServer(socket -> {
      requests.add(readRequest(socket.getInputStream()));
      write(socket, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
    });

    try (var response = client().exchange("PATCH", server.resolve("/api/v1/namespaces/ns/pods/p?fieldManager=x%20y"),
        Map.of("Content-Type", "application/merge-patch+json"), "{\"a\":1}".getBytes(StandardCharsets.UTF_8), TIMEOUT, false)) {
      assertThat(response.status()).isEqualTo(200);
      assertThat(new String(response.body().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("{}");
    }

    assertThat(requests.poll(5, TimeUnit.SECONDS)).isEqualTo("PATCH /api/v1/namespaces/ns/pods/p?fieldManager=x%20y HTTP/1.1\r\n"
        + "Host: 127.0.0.1:" + server.getPort() + "\r\n"
        + "User-Agent: gpu-admission-node-agent\r\n"
        + "Content-Type: application/merge-patch+json\r\n"
        + "Content-Length: 7\r\n\r\n"
        + "{\"a\":1}");
  }

  @Test
  void aCallKeepsItsConnectionForTheNextAndAWatchHasOneOfItsOwn() throws Exception {
    var connections = new java.util.concurrent.atomic.AtomicInteger();
    var requests = new LinkedBlockingQueue<String>();
    var server = rawServer(socket -> {
      connections.incrementAndGet();
      var in = socket.getInputStream();
      while (true) {
        var request = readRequest(in);
        if (request.isEmpty()) {
          return;
        }
        requests.add(request.lines().findFirst().orElse("") + (request.contains("Connection: close") ? " (close)" : ""));
        if (request.contains("watch=true")) {
          write(socket, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\na\n\r\n0\r\n\r\n");
          return;
        }
        // Chunked: the parser stops at the last brace, before the last chunk, which close() reads.
        write(socket, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
      }
    });
    var api = ApiServer.at(server.resolve("").toString(), serviceAccount, false, TIMEOUT);

    api.get("/api/v1/nodes/gpu-1");
    api.mergePatch("/api/v1/namespaces/default/pods/p", "{}");
    try (var lines = api.watch("/api/v1/pods?watch=true")) {
      assertThat(lines.readLine()).isEqualTo("a");
    }
    api.get("/api/v1/nodes/gpu-1");
    api.create("/api/v1/namespaces/default/events", Json.read(new ByteArrayInputStream("{}".getBytes(StandardCharsets.UTF_8))));

    assertThat(List.of(requests.poll(5, TimeUnit.SECONDS), requests.poll(5, TimeUnit.SECONDS), requests.poll(5, TimeUnit.SECONDS),
        requests.poll(5, TimeUnit.SECONDS), requests.poll(5, TimeUnit.SECONDS))).containsExactly("GET /api/v1/nodes/gpu-1 HTTP/1.1",
            "PATCH /api/v1/namespaces/default/pods/p HTTP/1.1", "GET /api/v1/pods?watch=true HTTP/1.1 (close)",
            "GET /api/v1/nodes/gpu-1 HTTP/1.1", "POST /api/v1/namespaces/default/events HTTP/1.1");
    // The first three calls on one connection, the watch on its own, and the create, which must
    // not be sent twice, on a new one.
    assertThat(connections.get()).isEqualTo(3);
  }

  @Test
  void aKeptConnectionTheServerClosedIsReplacedAndOneItSaysToCloseIsNotKept() throws Exception {
    var connections = new java.util.concurrent.atomic.AtomicInteger();
    var server = rawServer(socket -> {
      var n = connections.incrementAndGet();
      var in = socket.getInputStream();
      readRequest(in);
      // The first connection ends after its answer without a word (an idle timeout); the second says so.
      write(socket, n == 1 ? "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"n\":1}"
          : "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 7\r\n\r\n{\"n\":" + n + "}");
    });
    var api = ApiServer.at(server.resolve("").toString(), serviceAccount, false, TIMEOUT);

    assertThat(api.get("/a").path("n").asInt()).isEqualTo(1);
    Thread.sleep(200);
    assertThat(api.get("/b").path("n").asInt()).isEqualTo(2);
    assertThat(api.get("/c").path("n").asInt()).isEqualTo(3);
    assertThat(connections.get()).isEqualTo(3);
  }

  @Test
  void aChunkedBodyIsDecodedWithItsExtensionsAndTrailersDropped() throws Exception {
    var server = rawServer(socket -> {
      readRequest(socket.getInputStream());
      write(socket, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
          + "5;name=value\r\n{\"a\":\r\n" + "1\r\n1\r\n" + "A\r\n,\"b\":\"xyz\"\r\n" + "1\r\n}\r\n" + "0\r\nX-Trailer: t\r\n\r\n");
    });

    try (var response = client().exchange("GET", server.resolve("/x"), Map.of(), null, TIMEOUT, false)) {
      assertThat(response.headers()).containsEntry("content-type", "application/json");
      assertThat(new String(response.body().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("{\"a\":1,\"b\":\"xyz\"}");
    }
  }

  @Test
  void aChunkedBodyGivesEachChunkAsItComesWithoutWaitingForMore() throws Exception {
    var next = new LinkedBlockingQueue<String>();
    var server = rawServer(socket -> {
      readRequest(socket.getInputStream());
      write(socket, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      String chunk;
      while (!(chunk = take(next)).isEmpty()) {
        write(socket, Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n");
      }
      write(socket, "0\r\n\r\n");
    });

    try (var response = client().exchange("GET", server.resolve("/watch"), Map.of(), null, TIMEOUT, true)) {
      var buffer = new byte[1024];
      next.add("{\"type\":\"ADDED\"}\n");
      assertThat(new String(buffer, 0, response.body().read(buffer), StandardCharsets.UTF_8)).isEqualTo("{\"type\":\"ADDED\"}\n");
      next.add("{\"type\":\"DELETED\"}\n");
      assertThat(new String(buffer, 0, response.body().read(buffer), StandardCharsets.UTF_8)).isEqualTo("{\"type\":\"DELETED\"}\n");
      next.add("");
      assertThat(response.body().read(buffer)).isEqualTo(-1);
    }
  }

  @Test
  void malformedChunkingIsAnErrorNotATruncatedBody() {
    assertThatThrownBy(() -> chunked("zz\r\nab\r\n0\r\n\r\n")).isInstanceOf(IOException.class)
        .hasMessage("malformed chunked body: bad chunk size line");
    assertThatThrownBy(() -> chunked("2\r\nabc\r\n0\r\n\r\n")).isInstanceOf(IOException.class)
        .hasMessage("malformed chunked body: a chunk's data is not followed by CRLF");
    assertThatThrownBy(() -> chunked("10000000000000000\r\n")).isInstanceOf(IOException.class)
        .hasMessage("malformed chunked body: bad chunk size line");
    assertThatThrownBy(() -> chunked("5\r\nab")).isInstanceOf(IOException.class)
        .hasMessage("the connection ended inside a chunk");
    assertThatThrownBy(() -> chunked("2\r\nab\r\n")).isInstanceOf(IOException.class)
        .hasMessage("the connection ended inside a chunked body");
  }

  @Test
  void aBodyShorterThanItsContentLengthIsAnErrorAndOneWithoutLengthEndsWithTheConnection() throws Exception {
    var server = rawServer(socket -> {
      var request = readRequest(socket.getInputStream());
      write(socket, request.startsWith("GET /short ") ? "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a\"" : "HTTP/1.0 200 OK\r\n\r\n{\"b\":2}");
    });

    try (var response = client().exchange("GET", server.resolve("/short"), Map.of(), null, TIMEOUT, false)) {
      assertThatThrownBy(() -> response.body().readAllBytes()).isInstanceOf(IOException.class)
          .hasMessage("the connection ended 6 bytes before the body's end");
    }
    try (var response = client().exchange("GET", server.resolve("/until-close"), Map.of(), null, TIMEOUT, false)) {
      assertThat(new String(response.body().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("{\"b\":2}");
    }
  }

  @Test
  void whatIsNotAnHttpResponseIsNamed() throws Exception {
    var answers = new LinkedBlockingQueue<>(List.of("SSH-2.0-OpenSSH_9.6\r\n", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Big: " + "a".repeat(Http1Client.MAX_HEAD) + "\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"));
    var server = rawServer(socket -> {
      readRequest(socket.getInputStream());
      write(socket, take(answers));
    });
    var client = client();

    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/"), Map.of(), null, TIMEOUT, false)).isInstanceOf(IOException.class)
        .hasMessage("not an HTTP/1.x response: SSH-2.0-OpenSSH_9.6");
    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/"), Map.of(), null, TIMEOUT, false)).isInstanceOf(IOException.class)
        .hasMessage("malformed response header: no colon here");
    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/"), Map.of(), null, TIMEOUT, false)).isInstanceOf(IOException.class)
        .hasMessage("response head over 65536 bytes");
    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/"), Map.of(), null, TIMEOUT, false)).isInstanceOf(IOException.class)
        .hasMessage("unsupported transfer encoding: gzip");
    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/"), Map.of(), null, TIMEOUT, false)).isInstanceOf(IOException.class)
        .hasMessage("malformed Content-Length: -1");
  }

  @Test
  void aServerThatNeverAnswersTimesOutAndAnInterimResponseIsSkipped() throws Exception {
    var server = rawServer(socket -> {
      var request = readRequest(socket.getInputStream());
      if (request.startsWith("GET /continue ")) {
        write(socket, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n");
        return;
      }
      Thread.sleep(30_000);
    });
    var client = client();

    try (var response = client.exchange("GET", server.resolve("/continue"), Map.of(), null, TIMEOUT, false)) {
      assertThat(response.status()).isEqualTo(204);
      assertThat(response.body().read()).isEqualTo(-1);
    }
    var started = System.nanoTime();
    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/silent"), Map.of(), null, Duration.ofMillis(300), false))
        .isInstanceOf(java.net.SocketTimeoutException.class);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void aServerThatTricklesItsAnswerIsHeldToTheTimeoutAsAWhole() throws Exception {
    var server = rawServer(socket -> {
      var request = readRequest(socket.getInputStream());
      if (request.startsWith("GET /head ")) {
        write(socket, "HTTP/1.1 200 OK\r\n");
        for (int i = 0; i < 600; i++) {
          write(socket, "X");
          Thread.sleep(50);
        }
      } else {
        write(socket, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
        for (int i = 0; i < 600; i++) {
          write(socket, "x");
          Thread.sleep(50);
        }
      }
    });
    var client = client();

    // A byte every 50 ms: each read is quick, the whole is not.
    var started = System.nanoTime();
    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/head"), Map.of(), null, Duration.ofMillis(500), false))
        .isInstanceOf(java.net.SocketTimeoutException.class).hasMessage("no answer in time");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    try (var response = client.exchange("GET", server.resolve("/body"), Map.of(), null, Duration.ofMillis(500), false)) {
      assertThatThrownBy(() -> response.body().readAllBytes()).isInstanceOf(java.net.SocketTimeoutException.class)
          .hasMessage("the answer's body did not arrive in time");
    }
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  void aWatchLineWithoutEndIsAnErrorNotAFullHeap() throws Exception {
    var server = rawServer(socket -> {
      readRequest(socket.getInputStream());
      write(socket, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
      var chunk = "a".repeat(64 * 1024);
      for (int i = 0; i < 100; i++) {
        write(socket, Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n");
      }
    });
    var lines = ApiServer.at(server.resolve("").toString(), serviceAccount, false, TIMEOUT).watch("/api/v1/pods?watch=true");

    assertThatThrownBy(lines::readLine).isInstanceOf(IOException.class).hasMessage("a line over 4194304 characters");
    lines.close();
  }

  @Test
  void aRepeatedContentLengthIsOneAndAnotherTransferCodingIsRefused() throws Exception {
    var answers = new LinkedBlockingQueue<>(List.of("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n{}",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"));
    var server = rawServer(socket -> {
      readRequest(socket.getInputStream());
      write(socket, take(answers));
    });
    var client = client();

    try (var response = client.exchange("GET", server.resolve("/"), Map.of(), null, TIMEOUT, false)) {
      assertThat(new String(response.body().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("{}");
    }
    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/"), Map.of(), null, TIMEOUT, false)).isInstanceOf(IOException.class)
        .hasMessage("malformed Content-Length: 2, 3");
    assertThatThrownBy(() -> client.exchange("GET", server.resolve("/"), Map.of(), null, TIMEOUT, false)).isInstanceOf(IOException.class)
        .hasMessage("unsupported transfer encoding: gzip, chunked");
  }

  @Test
  void aHostNameThatDoesNotResolveIsSaid() {
    assertThatThrownBy(() -> ApiServer.at("https://no-such-host.invalid:6443", serviceAccount, false, TIMEOUT).get("/api/v1/nodes/gpu-1"))
        .isInstanceOf(ApiException.class)
        .hasMessage("/api/v1/nodes/gpu-1: cannot resolve the host name no-such-host.invalid");
  }

  @Test
  void aWatchWaitingForItsNextLineEndsWhenAnotherThreadClosesIt() throws Exception {
    var server = rawServer(socket -> {
      readRequest(socket.getInputStream());
      write(socket, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + "2\r\na\n\r\n");
      Thread.sleep(30_000);
    });
    var api = ApiServer.at(server.resolve("").toString(), serviceAccount, false, TIMEOUT);
    var lines = api.watch("/api/v1/pods?watch=true");
    assertThat(lines.readLine()).isEqualTo("a");
    var reading = new java.util.concurrent.CountDownLatch(1);
    var reader = CompletableFuture.supplyAsync(() -> {
      reading.countDown();
      try {
        return "read " + lines.readLine();
      } catch (IOException e) {
        return "ended: " + e.getMessage();
      }
    });
    reading.await();
    Thread.sleep(200);

    lines.close();

    // Long before the server's 30 s.
    assertThat(reader.get(5, TimeUnit.SECONDS)).startsWith("ended: ");
  }

  @Test
  void overHttpsTheServiceAccountsCaIsTrustedAndTheHostNameChecked() throws Exception {
    Files.copy(DevCertificates.DIR.resolve("ca.crt"), serviceAccount.resolve("ca.crt"));
    var server = httpsServer(new InetSocketAddress(0), "{\"kind\":\"Node\"}");
    var port = server.getAddress().getPort();

    // The certificate names 127.0.0.1 and localhost.
    assertThat(ApiServer.at("https://127.0.0.1:" + port, serviceAccount, false, TIMEOUT).get("/api/v1/nodes/gpu-1").path("kind").asText())
        .isEqualTo("Node");
    assertThat(ApiServer.at("https://localhost:" + port, serviceAccount, false, TIMEOUT).get("/api/v1/nodes/gpu-1").path("kind").asText())
        .isEqualTo("Node");
    // 127.0.0.2 is the same machine, but not a name the certificate gives.
    assertThatThrownBy(() -> ApiServer.at("https://127.0.0.2:" + port, serviceAccount, false, TIMEOUT).get("/api/v1/nodes/gpu-1"))
        .isInstanceOf(ApiException.class)
        .hasMessage("/api/v1/nodes/gpu-1: TLS: No subject alternative names matching IP address 127.0.0.2 found");
    // trust-certs: any certificate, any name.
    assertThat(ApiServer.at("https://127.0.0.2:" + port, serviceAccount, true, TIMEOUT).get("/api/v1/nodes/gpu-1").path("kind").asText())
        .isEqualTo("Node");
  }

  @Test
  void overHttpsACertificateFromAnotherCaIsRefused() throws Exception {
    // The scheduler's client certificate is its own CA's, not the one that signed the server's.
    Files.copy(DevCertificates.DIR.resolve("scheduler.crt"), serviceAccount.resolve("ca.crt"));
    var server = httpsServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), "{}");

    assertThatThrownBy(() -> ApiServer.at("https://127.0.0.1:" + server.getAddress().getPort(), serviceAccount, false, TIMEOUT)
        .get("/api/v1/nodes/gpu-1"))
        .isInstanceOf(ApiException.class)
        .hasMessage("/api/v1/nodes/gpu-1: TLS: PKIX path building failed: unable to find valid certification path to requested target");
  }

  private static String chunked(String body) throws IOException {
    return new String(new ChunkedBody(new ByteArrayInputStream(body.getBytes(StandardCharsets.ISO_8859_1))).readAllBytes(),
        StandardCharsets.ISO_8859_1);
  }

  private Http1Client client() {
    return new Http1Client(null, true, TIMEOUT);
  }

  private HttpsServer httpsServer(InetSocketAddress address, String json) throws Exception {
    var server = HttpsServer.create(address, 10);
    server.setHttpsConfigurator(new HttpsConfigurator(DevCertificates.serving()));
    server.createContext("/", exchange -> {
      var body = json.getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    open.add(() -> server.stop(0));
    return server;
  }

  interface Script {
    void serve(Socket socket) throws Exception;
  }

  /** A server on the loopback that runs {@code script} for each connection, then closes it; its URL's base. */
  private ScriptedServer rawServer(Script script) throws IOException {
    var listening = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
    var thread = Thread.ofPlatform().daemon().start(() -> {
      while (!listening.isClosed()) {
        try {
          var socket = listening.accept();
          Thread.ofPlatform().daemon().start(() -> {
            try (socket) {
              script.serve(socket);
            } catch (Exception e) {
              // the test sees what the client got
            }
          });
        } catch (IOException e) {
          return;
        }
      }
    });
    open.add(listening);
    open.add(thread::interrupt);
    return new ScriptedServer(listening.getLocalPort());
  }

  record ScriptedServer(int getPort) {
    URI resolve(String path) {
      return URI.create("http://127.0.0.1:" + getPort + path);
    }
  }

  /** The request's head and, when it gives a Content-Length, its body. */
  private static String readRequest(InputStream in) throws IOException {
    var head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      var b = in.read();
      if (b == -1) {
        return head.toString();
      }
      head.append((char) b);
    }
    var length = head.toString().lines().filter(l -> l.startsWith("Content-Length: ")).map(l -> Integer.parseInt(l.substring(16)))
        .findFirst().orElse(0);
    return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }

  private static void write(Socket socket, String text) throws IOException {
    socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
    socket.getOutputStream().flush();
  }

  private static String take(LinkedBlockingQueue<String> queue) throws InterruptedException {
    var next = queue.poll(10, TimeUnit.SECONDS);
    return next == null ? "" : next;
  }
}
