package io.gpuadmission.node.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The node agent's client of the API server: plain requests on the JDK's HTTP client (HTTP/1.1),
 * bodies read as Jackson trees ({@link Json}). Hand-written rather than fabric8 (the project's client everywhere
 * else) for its footprint: the agent runs on every GPU node and makes five kinds of call (list and
 * watch its node's pods and one ConfigMap, get its Node, merge-patch a pod, create an Event), and
 * fabric8 with Vert.x and the model's databinding cost it ~2,400 classes and ~39 MiB of resident
 * memory (bench/README.md, "Node agent").
 *
 * <p>Where it is: in a pod, {@code https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT}
 * with the service account's CA and token (the token file read again whenever it changes: bound
 * tokens rotate); else the URL of {@code quarkus.kubernetes-client.api-server-url}, as in server
 * mode (tests and benchmarks), with the service account's token and CA if present.
 */
public final class ApiServer implements AutoCloseable {
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

  private final URI base;
  private final HttpClient http;
  private final Optional<ServiceAccountToken> token;
  private final Duration requestTimeout;

  ApiServer(URI base, SSLContext tls, Optional<ServiceAccountToken> token, Duration requestTimeout) {
    this.base = base;
    this.token = token;
    this.requestTimeout = requestTimeout;
    var builder = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CONNECT_TIMEOUT);
    if (tls != null) {
      builder.sslContext(tls);
    }
    this.http = builder.build();
  }

  /** The API server at {@code url}: {@code serviceAccount}'s token and CA where present, or any certificate when {@code trustCerts}. */
  public static ApiServer at(String url, Path serviceAccount, boolean trustCerts, Duration requestTimeout) {
    URI base;
    try {
      base = new URI(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
    } catch (java.net.URISyntaxException e) {
      throw new IllegalArgumentException("quarkus.kubernetes-client.api-server-url " + url + ": not a URL (" + e.getMessage() + ")", e);
    }
    if (!"http".equals(base.getScheme()) && !"https".equals(base.getScheme())) {
      throw new IllegalArgumentException("quarkus.kubernetes-client.api-server-url " + url + ": not an http or https URL");
    }
    var tokenFile = serviceAccount.resolve("token");
    var ca = serviceAccount.resolve("ca.crt");
    SSLContext tls = null;
    if ("https".equals(base.getScheme())) {
      tls = trustCerts ? trustingAll() : Files.isReadable(ca) ? trusting(ca) : null;
    }
    return new ApiServer(base, tls, Files.exists(tokenFile) ? Optional.of(new ServiceAccountToken(tokenFile)) : Optional.empty(),
        requestTimeout);
  }

  /** In a pod: the API server's service address from the environment; empty outside one. */
  public static Optional<String> inClusterUrl(Map<String, String> env) {
    var host = env.get("KUBERNETES_SERVICE_HOST");
    var port = env.getOrDefault("KUBERNETES_SERVICE_PORT", "443");
    if (host == null || host.isBlank()) {
      return Optional.empty();
    }
    return Optional.of("https://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port);
  }

  public URI base() {
    return base;
  }

  /** GET of one object or list; throws {@link ApiException} for anything but 2xx. */
  public JsonNode get(String path) {
    return tree(send(HttpRequest.newBuilder(uri(path)).GET(), path));
  }

  /** A JSON merge patch ({@code application/merge-patch+json}). */
  public JsonNode mergePatch(String path, String patch) {
    return tree(send(HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/merge-patch+json")
        .method("PATCH", HttpRequest.BodyPublishers.ofString(patch)), path));
  }

  /** A POST (create) of {@code body}. */
  public JsonNode create(String path, JsonNode body) {
    var text = Json.write(body);
    return tree(send(HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(text)), path));
  }

  /**
   * A watch: the response body, one event per line, until the server ends it or the reader is
   * closed. Throws {@link ApiException} when the server refuses it (410 Gone: the version is too old).
   */
  public BufferedReader watch(String path) {
    // The timeout ends with the response's headers: the body may stream for the watch's whole length.
    var request = HttpRequest.newBuilder(uri(path)).timeout(requestTimeout).GET();
    var response = exchange(request, path, HttpResponse.BodyHandlers.ofInputStream());
    if (response.statusCode() / 100 != 2) {
      byte[] body;
      try (var in = response.body()) {
        body = in.readNBytes(64 * 1024);
      } catch (IOException e) {
        body = new byte[0];
      }
      throw refused(response.statusCode(), body, path);
    }
    return new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
  }

  /** A query parameter's value, encoded. */
  public static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  private URI uri(String path) {
    return URI.create(base + path);
  }

  private HttpResponse<InputStream> send(HttpRequest.Builder request, String path) {
    var response = exchange(request.timeout(requestTimeout), path, HttpResponse.BodyHandlers.ofInputStream());
    if (response.statusCode() / 100 != 2) {
      try (var in = response.body()) {
        throw refused(response.statusCode(), in.readNBytes(64 * 1024), path);
      } catch (IOException e) {
        throw new ApiException(response.statusCode(), "HTTP " + response.statusCode() + " for " + path);
      }
    }
    return response;
  }

  private <T> HttpResponse<T> exchange(HttpRequest.Builder request, String path, HttpResponse.BodyHandler<T> body) {
    request.header("Accept", "application/json");
    try {
      var response = http.send(authorized(request.copy()), body);
      if (response.statusCode() == 401 && token.isPresent()) {
        // The token may have been replaced since it was read (an expired bound token): once more, read afresh.
        close(response);
        token.get().refused();
        response = http.send(authorized(request.copy()), body);
      }
      return response;
    } catch (IOException e) {
      throw new ApiException(path + ": " + describe(e), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ApiException(path + ": interrupted", e);
    }
  }

  private HttpRequest authorized(HttpRequest.Builder request) {
    token.flatMap(ServiceAccountToken::current).ifPresent(t -> request.setHeader("Authorization", "Bearer " + t));
    return request.build();
  }

  private static void close(HttpResponse<?> response) {
    if (response.body() instanceof InputStream in) {
      try {
        in.close();
      } catch (IOException ignored) {
        // discarded anyway
      }
    }
  }

  private static JsonNode tree(HttpResponse<InputStream> response) {
    try (var in = response.body()) {
      return Json.read(in);
    } catch (IOException e) {
      throw new ApiException(response.statusCode(), "unreadable answer from the API server: " + e.getMessage());
    }
  }

  /** The Status object's message, as {@code kubectl} shows it, with the HTTP status. */
  static ApiException refused(int code, byte[] body, String path) {
    String message = null;
    try {
      var status = Json.read(new ByteArrayInputStream(body));
      if (status != null && status.path("message").isTextual()) {
        message = status.path("message").asText();
      }
    } catch (IOException notJson) {
      // The status line says it.
    }
    if (message == null) {
      var text = new String(body, StandardCharsets.UTF_8).strip();
      message = text.isEmpty() ? path : text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }
    return new ApiException(code, message + " (HTTP " + code + ")");
  }

  private static String describe(IOException e) {
    var message = e.getMessage();
    if (e instanceof java.net.ConnectException) {
      return "connection refused" + (message == null || message.isBlank() ? "" : " (" + message + ")");
    }
    if (e instanceof java.net.http.HttpTimeoutException) {
      return "no answer in time";
    }
    return message == null ? e.getClass().getSimpleName() : message;
  }

  private static SSLContext trusting(Path ca) {
    try (var in = Files.newInputStream(ca)) {
      var store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (var cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + i++, cert);
      }
      var trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(store);
      var context = SSLContext.getInstance("TLS");
      context.init(null, trust.getTrustManagers(), new SecureRandom());
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot read the API server's CA " + ca + ": " + e.getMessage(), e);
    }
  }

  /** quarkus.kubernetes-client.trust-certs: any certificate (a test API server's own). */
  private static SSLContext trustingAll() {
    // The JDK's client checks the host name apart from the trust manager.
    System.setProperty("jdk.internal.httpclient.disableHostnameVerification", "true");
    try {
      return TrustAnyCertificate.context();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    http.close();
  }
}
