package io.gpuadmission.node;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * In front of the fabric8 mock API server for the node agent's own client: the mock serves watches
 * over WebSocket only (as fabric8 asks for them), kube-apiserver serves them as a streamed HTTP
 * body, one event per line (as the kubelet and the agent ask for them). This proxy turns each
 * WebSocket message of the mock's watch into a line of a chunked response, relays a refused watch's
 * status (410 Gone after a restart), and passes every other request through; with the mock down it
 * answers 503. Test infrastructure only.
 */
public final class HttpWatchProxy implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService threads;
  private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
  private final URI mock;

  private HttpWatchProxy(URI mock, javax.net.ssl.SSLContext tls) throws IOException {
    this.mock = mock;
    if (tls == null) {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    } else {
      var https = com.sun.net.httpserver.HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
      https.setHttpsConfigurator(new com.sun.net.httpserver.HttpsConfigurator(tls));
      server = https;
    }
    threads = Executors.newCachedThreadPool(r -> {
      var thread = new Thread(r, "watch-proxy");
      thread.setDaemon(true);
      return thread;
    });
    server.setExecutor(threads);
    server.createContext("/", this::handle);
    server.start();
  }

  /** A proxy to the mock API server at {@code mockUrl} (http). */
  public static HttpWatchProxy start(String mockUrl) {
    return start(mockUrl, null);
  }

  /** As {@link #start(String)}, serving HTTPS with {@code tls} (as kube-apiserver does) when it is not null. */
  public static HttpWatchProxy start(String mockUrl, javax.net.ssl.SSLContext tls) {
    try {
      return new HttpWatchProxy(URI.create(mockUrl.endsWith("/") ? mockUrl.substring(0, mockUrl.length() - 1) : mockUrl), tls);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public String url() {
    return (server instanceof com.sun.net.httpserver.HttpsServer ? "https" : "http") + "://127.0.0.1:" + server.getAddress().getPort();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      var target = exchange.getRequestURI().getRawPath()
          + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery());
      if (target.contains("watch=true")) {
        watch(exchange, target);
      } else {
        forward(exchange, target);
      }
    }
  }

  private void forward(HttpExchange exchange, String target) throws IOException {
    var body = exchange.getRequestBody().readAllBytes();
    var request = HttpRequest.newBuilder(URI.create(mock + target)).timeout(Duration.ofSeconds(10))
        .method(exchange.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    var type = exchange.getRequestHeaders().getFirst("Content-Type");
    if (type != null) {
      request.header("Content-Type", type);
    }
    HttpResponse<byte[]> response;
    try {
      response = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (IOException | InterruptedException e) {
      down(exchange, e);
      return;
    }
    response.headers().firstValue("Content-Type").ifPresent(t -> exchange.getResponseHeaders().set("Content-Type", t));
    var out = response.body();
    exchange.sendResponseHeaders(response.statusCode(), out.length == 0 ? -1 : out.length);
    if (out.length > 0) {
      exchange.getResponseBody().write(out);
    }
  }

  private void watch(HttpExchange exchange, String target) throws IOException {
    var ended = new CompletableFuture<Void>();
    var out = exchange.getResponseBody();
    var listener = new WebSocket.Listener() {
      private final StringBuilder partial = new StringBuilder();

      @Override
      public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
          var line = partial.toString().replace("\n", "") + "\n";
          partial.setLength(0);
          try {
            synchronized (out) {
              out.write(line.getBytes(StandardCharsets.UTF_8));
              out.flush();
            }
          } catch (IOException clientGone) {
            ended.complete(null);
            socket.abort();
          }
        }
        socket.request(1);
        return null;
      }

      @Override
      public CompletionStage<?> onClose(WebSocket socket, int statusCode, String reason) {
        ended.complete(null);
        return null;
      }

      @Override
      public void onError(WebSocket socket, Throwable error) {
        ended.complete(null);
      }
    };
    WebSocket socket;
    try {
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      socket = client.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(2))
          .buildAsync(URI.create("ws" + mock.toString().substring(4) + target), new Starting(exchange, listener)).get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException refused) {
        var code = refused.getResponse().statusCode();
        var body = refused.getResponse().body() instanceof byte[] bytes ? bytes : ("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
            + "\"message\":\"watch refused\",\"code\":" + code + "}").getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(code, body.length);
        exchange.getResponseBody().write(body);
        return;
      }
      down(exchange, e.getCause());
      return;
    } catch (Exception e) {
      down(exchange, e);
      return;
    }
    try {
      ended.get();
    } catch (InterruptedException | ExecutionException e) {
      // the proxy stops
    } finally {
      socket.abort();
    }
  }

  /** Sends the response's headers once the mock accepted the watch, before its first message. */
  private static final class Starting implements WebSocket.Listener {
    private final HttpExchange exchange;
    private final WebSocket.Listener then;

    Starting(HttpExchange exchange, WebSocket.Listener then) {
      this.exchange = exchange;
      this.then = then;
    }

    @Override
    public void onOpen(WebSocket socket) {
      try {
        exchange.sendResponseHeaders(200, 0);
      } catch (IOException e) {
        socket.abort();
        return;
      }
      socket.request(1);
    }

    @Override
    public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
      return then.onText(socket, data, last);
    }

    @Override
    public CompletionStage<?> onClose(WebSocket socket, int statusCode, String reason) {
      return then.onClose(socket, statusCode, reason);
    }

    @Override
    public void onError(WebSocket socket, Throwable error) {
      then.onError(socket, error);
    }
  }

  private static void down(HttpExchange exchange, Throwable e) throws IOException {
    var body = ("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"mock API server down: "
        + String.valueOf(e).replace("\"", "'") + "\",\"code\":503}").getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(503, body.length);
    exchange.getResponseBody().write(body);
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
    client.close();
  }

}
