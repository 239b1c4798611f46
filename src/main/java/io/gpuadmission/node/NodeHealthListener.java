package io.gpuadmission.node;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The one listener of node-agent mode: plain HTTP for the kubelet's probes, {@code
 * /q/health/live}, {@code /ready} and {@code /started} (the paths of server mode), and nothing
 * else (404). The webhook's listener is off in this mode (the run mode turns Quarkus' HTTP server
 * off), so this is a bare Vert.x server on the Vert.x Quarkus already runs.
 */
final class NodeHealthListener implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(NodeHealthListener.class);

  private final HttpServer server;

  private NodeHealthListener(HttpServer server) {
    this.server = server;
  }

  static NodeHealthListener start(Vertx vertx, int port, NodeAgentHealth health) {
    var server = vertx.createHttpServer().requestHandler(request -> {
      Supplier<NodeAgentHealth.Answer> probe = switch (request.path()) {
        case "/q/health/live" -> health::live;
        case "/q/health/ready", "/q/health" -> health::ready;
        case "/q/health/started" -> health::started;
        default -> null;
      };
      if (probe == null || (request.method() != HttpMethod.GET && request.method() != HttpMethod.HEAD)) {
        request.response().setStatusCode(404).end();
        return;
      }
      var answer = probe.get();
      request.response().setStatusCode(answer.status()).putHeader("Content-Type", "application/json").end(answer.json());
    });
    try {
      server.listen(port).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("node agent health listener could not listen on port " + port + ": " + e.getMessage(), e);
    }
    LOG.infof("node agent health on http://0.0.0.0:%d/q/health/{live,ready,started}", server.actualPort());
    return new NodeHealthListener(server);
  }

  int port() {
    return server.actualPort();
  }

  @Override
  public void close() {
    server.close();
  }
}
