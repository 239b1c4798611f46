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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's API client over the wire (the JDK's HTTP client): what it sends, that its calls share
 * a connection and a watch has its own, its bounds on a server that does not answer or trickles
 * (connect, TLS, head, body), on a body's size and a watch line's, a watch ended from another
 * thread, and HTTPS with the service account's CA and the host name checked.
 */
class ApiServerHttpTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  @TempDir Path serviceAccount;
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (var c : open.reversed()) {
      c.close();
    }
  }

  private ApiServer api(String url, Duration timeout) {
    var api = ApiServer.at(url, serviceAccount, false, timeout);
    open.add(api);
    return api;
  }

  @Test
  void aMergePatchIsSentWithItsTokenTypeAndBody() throws Exception {
    Files.writeString(serviceAccount.resolve("token"), "t0ken\n");
    var requests = new LinkedBlockingQueue<String>();
    var server = rawServer(socket -> {
      requests.add(readRequest(socket.getInputStream()));
      write(socket, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
    });

    api(server.url(), TIMEOUT).mergePatch("/api/v1/namespaces/ns/pods/p?fieldManager=x%20y", "{\"a\":1}");

    var request = requests.poll(5, TimeUnit.SECONDS);
    assertThat(request.lines().findFirst()).contains("PATCH /api/v1/namespaces/ns/pods/p?fieldManager=x%20y HTTP/1.1");
    assertThat(request.lines().map(l -> l.toLowerCase(java.util.Locale.ROOT)))
        .contains("content-type: application/merge-patch+json", "authorization: bearer t0ken", "accept: application/json",
            "user-agent: gpu-admission-node-agent", "content-length: 7");
    assertThat(request).endsWith("\r\n\r\n{\"a\":1}");
  }

  @Test
  void callsShareOneConnectionAndAWatchHasOneOfItsOwn() throws Exception {
    var connections = new AtomicInteger();
    var requests = new LinkedBlockingQueue<String>();
    var server = rawServer(socket -> {
      connections.incrementAndGet();
      var in = socket.getInputStream();
      while (true) {
        var request = readRequest(in);
        if (request.isEmpty()) {
          return;
        }
        requests.add(request.lines().findFirst().orElse(""));
        if (request.contains("watch=true")) {
          write(socket, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\na\n\r\n");
          Thread.sleep(30_000);
          return;
        }
        // Chunked: the parser stops at the last brace, before the last chunk, which close() reads.
        write(socket, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
      }
    });
    var api = api(server.url(), TIMEOUT);

    api.get("/api/v1/nodes/gpu-1");
    api.mergePatch("/api/v1/namespaces/default/pods/p", "{}");
    try (var lines = api.watch("/api/v1/pods?watch=true")) {
      assertThat(lines.readLine()).isEqualTo("a");
      api.get("/api/v1/nodes/gpu-1");
    }
    api.create("/api/v1/namespaces/default/events", Json.read(new ByteArrayInputStream("{}".getBytes(StandardCharsets.UTF_8))));
    for (int i = 0; i < 20; i++) {
      api.get("/api/v1/nodes/gpu-1");
    }

    assertThat(List.of(requests.poll(5, TimeUnit.SECONDS), requests.poll(5, TimeUnit.SECONDS), requests.poll(5, TimeUnit.SECONDS),
        requests.poll(5, TimeUnit.SECONDS), requests.poll(5, TimeUnit.SECONDS))).containsExactly("GET /api/v1/nodes/gpu-1 HTTP/1.1",
            "PATCH /api/v1/namespaces/default/pods/p HTTP/1.1", "GET /api/v1/pods?watch=true HTTP/1.1", "GET /api/v1/nodes/gpu-1 HTTP/1.1",
            "POST /api/v1/namespaces/default/events HTTP/1.1");
    // 24 calls on one connection, the watch on its own: no connection left behind by a call.
    assertThat(connections.get()).isEqualTo(2);
  }

  @Test
  void aServerThatAcceptsButNeverAnswersTimesOut() throws Exception {
    var server = rawServer(socket -> Thread.sleep(30_000));
    var api = api(server.url(), Duration.ofMillis(300));
    var https = api("https://127.0.0.1:" + server.port(), Duration.ofMillis(300));

    var started = System.nanoTime();
    assertThatThrownBy(() -> api.get("/silent")).isInstanceOf(ApiException.class).hasMessage("/silent: no answer in time");
    // Over HTTPS the TLS handshake is what never ends.
    assertThatThrownBy(() -> https.get("/silent")).isInstanceOf(ApiException.class).hasMessage("/silent: no answer in time");
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
        write(socket, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{\"a\":\"");
        for (int i = 0; i < 600; i++) {
          write(socket, "x");
          Thread.sleep(50);
        }
      }
    });
    var api = api(server.url(), Duration.ofMillis(500));

    // A byte every 50 ms: each read is quick, the whole is not.
    var started = System.nanoTime();
    assertThatThrownBy(() -> api.get("/head")).isInstanceOf(ApiException.class).hasMessage("/head: no answer in time");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    // The body has six times the call's timeout.
    assertThatThrownBy(() -> api.get("/body")).isInstanceOf(ApiException.class)
        .hasMessage("unreadable answer from the API server for /body: the answer's body did not arrive in time");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
  }

  @Test
  void aBodyOverTheLimitIsRefusedNotRead() throws Exception {
    var server = rawServer(socket -> {
      readRequest(socket.getInputStream());
      write(socket, "HTTP/1.1 200 OK\r\nContent-Length: " + (ApiServer.MAX_BODY + 1024) + "\r\n\r\n[\"");
      var chunk = "a".repeat(64 * 1024).getBytes(StandardCharsets.ISO_8859_1);
      for (long sent = 0; sent < ApiServer.MAX_BODY + 1024; sent += chunk.length) {
        socket.getOutputStream().write(chunk);
      }
    });

    assertThatThrownBy(() -> api(server.url(), TIMEOUT).get("/api/v1/pods")).isInstanceOf(ApiException.class)
        .hasMessage("unreadable answer from the API server for /api/v1/pods: an answer over 16 MiB");
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
    var lines = api(server.url(), TIMEOUT).watch("/api/v1/pods?watch=true");

    assertThatThrownBy(lines::readLine).isInstanceOf(IOException.class).hasMessage("a line over 4194304 characters");
    lines.close();
  }

  @Test
  void aHostNameThatDoesNotResolveIsSaid() {
    assertThatThrownBy(() -> api("https://no-such-host.invalid:6443", TIMEOUT).get("/api/v1/nodes/gpu-1"))
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
    var lines = api(server.url(), TIMEOUT).watch("/api/v1/pods?watch=true");
    assertThat(lines.readLine()).isEqualTo("a");
    var reading = new CountDownLatch(1);
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
    assertThat(api("https://127.0.0.1:" + port, TIMEOUT).get("/api/v1/nodes/gpu-1").path("kind").asText()).isEqualTo("Node");
    assertThat(api("https://localhost:" + port, TIMEOUT).get("/api/v1/nodes/gpu-1").path("kind").asText()).isEqualTo("Node");
    // 127.0.0.2 is the same machine, but not a name the certificate gives.
    assertThatThrownBy(() -> api("https://127.0.0.2:" + port, TIMEOUT).get("/api/v1/nodes/gpu-1"))
        .isInstanceOf(ApiException.class)
        .hasMessage("/api/v1/nodes/gpu-1: TLS: No subject alternative names matching IP address 127.0.0.2 found");
    // trust-certs: any certificate, any name.
    var trusting = ApiServer.at("https://127.0.0.2:" + port, serviceAccount, true, TIMEOUT);
    open.add(trusting);
    assertThat(trusting.get("/api/v1/nodes/gpu-1").path("kind").asText()).isEqualTo("Node");
  }

  @Test
  void overHttpsACertificateFromAnotherCaIsRefused() throws Exception {
    // The scheduler's client certificate is its own CA's, not the one that signed the server's.
    Files.copy(DevCertificates.DIR.resolve("scheduler.crt"), serviceAccount.resolve("ca.crt"));
    var server = httpsServer(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), "{}");

    assertThatThrownBy(() -> api("https://127.0.0.1:" + server.getAddress().getPort(), TIMEOUT).get("/api/v1/nodes/gpu-1"))
        .isInstanceOf(ApiException.class)
        .hasMessage("/api/v1/nodes/gpu-1: TLS: PKIX path building failed: unable to find valid certification path to requested target");
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

  /** A server on the loopback that runs {@code script} for each connection, then closes it. */
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

  record ScriptedServer(int port) {
    String url() {
      return "http://127.0.0.1:" + port;
    }
  }

  /** The request's head and, when it gives a Content-Length, its body; empty when the connection ends first. */
  private static String readRequest(InputStream in) throws IOException {
    var head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      var b = in.read();
      if (b == -1) {
        return "";
      }
      head.append((char) b);
    }
    var length = head.toString().lines().filter(l -> l.toLowerCase(java.util.Locale.ROOT).startsWith("content-length: "))
        .map(l -> Integer.parseInt(l.substring(16))).findFirst().orElse(0);
    return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }

  private static void write(Socket socket, String text) throws IOException {
    socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
    socket.getOutputStream().flush();
  }
}
