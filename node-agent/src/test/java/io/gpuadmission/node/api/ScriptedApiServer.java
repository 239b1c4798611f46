package io.gpuadmission.node.api;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An API server that answers from a script, on the JDK's HTTP server: each list request takes the
 * next list answer, each watch the next watch answer (its lines sent, then the body ended); a watch
 * with nothing left in its script is held open until the server stops. Records every request with
 * its Authorization header.
 */
final class ScriptedApiServer implements AutoCloseable {
  /** An answer: HTTP status and body (for a watch with status 200: its lines). */
  record Answer(int status, String body, boolean held) {
    static Answer ok(String json) {
      return new Answer(200, json, false);
    }

    static Answer lines(String... lines) {
      return new Answer(200, String.join("\n", lines) + "\n", false);
    }

    static Answer status(int code, String reason) {
      return new Answer(code, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"" + reason
          + "\",\"code\":" + code + "}", false);
    }

    /** A watch whose lines are sent and then nothing, never ended: a connection cut without a reset. */
    Answer heldOpen() {
      return new Answer(status, body, true);
    }
  }

  /** A request as it arrived: method, path with query, Authorization header (or null). */
  record Request(String method, String target, String authorization) {
    boolean watch() {
      return target.contains("watch=true");
    }

    /** A query parameter's value (still encoded), or null. */
    String param(String name) {
      var query = target.contains("?") ? target.substring(target.indexOf('?') + 1) : "";
      for (var pair : query.split("&")) {
        if (pair.startsWith(name + "=")) {
          return pair.substring(name.length() + 1);
        }
      }
      return null;
    }
  }

  final BlockingQueue<Answer> lists = new LinkedBlockingQueue<>();
  final BlockingQueue<Answer> watches = new LinkedBlockingQueue<>();
  final BlockingQueue<Answer> others = new LinkedBlockingQueue<>();
  final List<Request> requests = new CopyOnWriteArrayList<>();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final HttpServer server;

  ScriptedApiServer(int port) throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 20);
    server.setExecutor(Executors.newCachedThreadPool(r -> {
      var thread = new Thread(r, "scripted-api-server");
      thread.setDaemon(true);
      return thread;
    }));
    server.createContext("/", this::handle);
    server.start();
  }

  static ScriptedApiServer start() throws IOException {
    return new ScriptedApiServer(0);
  }

  String url() {
    return "http://127.0.0.1:" + port();
  }

  int port() {
    return server.getAddress().getPort();
  }

  List<Request> watchRequests() {
    return requests.stream().filter(Request::watch).toList();
  }

  List<Request> listRequests() {
    return requests.stream().filter(r -> !r.watch() && r.method().equals("GET") && r.param("limit") != null).toList();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      exchange.getRequestBody().readAllBytes();
      var target = exchange.getRequestURI().getRawPath()
          + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery());
      var request = new Request(exchange.getRequestMethod(), target, exchange.getRequestHeaders().getFirst("Authorization"));
      requests.add(request);
      var queue = request.watch() ? watches : request.param("limit") != null ? lists : others;
      var answer = queue.poll();
      if (answer == null) {
        if (request.watch()) {
          exchange.sendResponseHeaders(200, 0);
          exchange.getResponseBody().flush();
          hold();
          return;
        }
        answer = Answer.status(500, "nothing scripted for " + target);
      }
      var body = answer.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(answer.status(), request.watch() && answer.status() == 200 ? 0 : body.length);
      exchange.getResponseBody().write(body);
      if (answer.held()) {
        exchange.getResponseBody().flush();
        hold();
      }
    }
  }

  private void hold() {
    try {
      stopped.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    stopped.countDown();
    server.stop(0);
  }
}
