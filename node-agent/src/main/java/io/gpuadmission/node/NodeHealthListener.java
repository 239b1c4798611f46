package io.gpuadmission.node;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The one listener of node-agent mode: plain HTTP for the kubelet's probes, {@code
 * /q/health/live}, {@code /ready} and {@code /started} (the paths of server mode), and nothing
 * else (404). The JDK's own HTTP server on one thread: a few probes a minute need nothing more, and
 * it loads a few dozen classes where a Vert.x server would load hundreds.
 */
final class NodeHealthListener implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(NodeHealthListener.class);

  private final HttpServer server;

  private NodeHealthListener(HttpServer server) {
    this.server = server;
  }

  static NodeHealthListener start(int port, NodeAgentHealth health) {
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(port), 0);
    } catch (IOException e) {
      throw new IllegalStateException("node agent health listener could not listen on port " + port + ": " + e.getMessage(), e);
    }
    server.setExecutor(Executors.newSingleThreadExecutor(r -> {
      var thread = new Thread(r, "node-agent-health");
      thread.setDaemon(true);
      return thread;
    }));
    server.createContext("/", exchange -> answer(exchange, health));
    server.start();
    LOG.infof("node agent health on http://0.0.0.0:%d/q/health/{live,ready,started}", server.getAddress().getPort());
    return new NodeHealthListener(server);
  }

  private static void answer(HttpExchange exchange, NodeAgentHealth health) throws IOException {
    try (exchange) {
      Supplier<NodeAgentHealth.Answer> probe = switch (exchange.getRequestURI().getPath()) {
        case "/q/health/live" -> health::live;
        case "/q/health/ready", "/q/health" -> health::ready;
        case "/q/health/started" -> health::started;
        default -> null;
      };
      var method = exchange.getRequestMethod();
      if (probe == null || !(method.equals("GET") || method.equals("HEAD"))) {
        exchange.sendResponseHeaders(404, -1);
        return;
      }
      var answer = probe.get();
      var body = answer.json().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      if (method.equals("HEAD")) {
        exchange.sendResponseHeaders(answer.status(), -1);
        return;
      }
      exchange.sendResponseHeaders(answer.status(), body.length);
      exchange.getResponseBody().write(body);
    }
  }

  int port() {
    return server.getAddress().getPort();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
