package io.gpuadmission.health;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.gpuadmission.tls.CertificateBundle;
import io.vertx.core.net.PemKeyCertOptions;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * POSTs sample reviews to this server's own HTTPS port, to warm the TLS handshake and the HTTP
 * path. Through Vert.x' client, whose classes the server has mostly loaded already: the JDK's
 * HttpClient, used before, loaded ~470 classes and lambdas and threads of its own for five requests.
 */
final class SelfRequest implements AutoCloseable {
  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private static final Duration PER_REQUEST = Duration.ofSeconds(10);

  private final HttpClient client;
  private final String host;
  private final int port;

  /**
   * Trusts any certificate: the request goes to the listener's own address ({@code host}), which
   * the serving certificate (cert-manager's, say) need not name; it proves nothing about trust, it
   * only warms the path.
   * {@code caller} (null: none) is the client certificate presented to the extender.
   */
  SelfRequest(Vertx vertx, String host, int port, CertificateBundle caller) {
    var options =
        new HttpClientOptions()
            .setSsl(true)
            .setTrustAll(true)
            .setVerifyHost(false)
            .setConnectTimeout(2_000)
            .setMaxPoolSize(1);
    if (caller != null) {
      options.setKeyCertOptions(
          new PemKeyCertOptions()
              .setCertValue(Buffer.buffer(caller.certificatePem()))
              .setKeyValue(Buffer.buffer(caller.keyPem())));
    }
    this.client = vertx.createHttpClient(options);
    this.host = host;
    this.port = port;
  }

  /** Each sample once, in order; retries while the listener is not yet accepting. */
  void post(String path, List<byte[]> samples) throws IOException, InterruptedException {
    var deadline = System.nanoTime() + DEADLINE.toNanos();
    IOException last = null;
    while (System.nanoTime() < deadline) {
      try {
        for (var sample : samples) {
          var status = await(send(path, sample));
          if (status != 200) {
            throw new IOException("self-request to " + path + " answered HTTP " + status);
          }
        }
        return;
      } catch (IOException e) {
        last = e;
        Thread.sleep(200);
      }
    }
    throw last == null ? new IOException("no attempt made") : last;
  }

  private Future<Integer> send(String path, byte[] sample) {
    return client
        .request(HttpMethod.POST, port, host, path)
        .compose(
            request ->
                request
                    .putHeader("Content-Type", "application/json")
                    .send(Buffer.buffer(sample))
                    .compose(this::drain));
  }

  private Future<Integer> drain(HttpClientResponse response) {
    return response.body().map(body -> response.statusCode());
  }

  private static int await(Future<Integer> status) throws IOException, InterruptedException {
    try {
      return status
          .toCompletionStage()
          .toCompletableFuture()
          .get(PER_REQUEST.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new IOException("self-request failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("self-request took over " + PER_REQUEST.toSeconds() + " s", e);
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
