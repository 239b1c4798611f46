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
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;

/**
 * The node agent's client of the API server: the JDK's {@link HttpClient} (HTTP/1.1, TLS with the
 * service account's CA and the host name checked), bodies read as Jackson trees ({@link Json}).
 * Not fabric8 (the project's client everywhere else): the agent runs on every GPU node and makes
 * five kinds of call (list and watch its node's pods and one ConfigMap, get its Node, merge-patch a
 * pod, create an Event), and fabric8 with Vert.x and the model's databinding cost it ~2,400 classes
 * and ~39 MiB of resident memory (bench/README.md, "Node agent").
 *
 * <p>Every call is bounded: the connect, TLS handshake and response head by the call's timeout
 * (the request's timeout, however slowly a server trickles bytes), a body (not a watch's) by
 * {@link #BODY_TIMEOUTS} times it and by {@link #MAX_BODY} bytes ({@link BoundedBody}), a watch's
 * lines by {@link #MAX_EVENT} characters ({@link LineLimit}).
 *
 * <p>Where it is: in a pod, {@code https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT}
 * with the service account's CA and token (the token file read again whenever it changes: bound
 * tokens rotate); else the URL of {@code quarkus.kubernetes-client.api-server-url}, as in server
 * mode (tests and benchmarks), with the service account's token and CA if present.
 */
public final class ApiServer implements AutoCloseable {
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  /** The longest watch event line read. */
  static final int MAX_EVENT = 4 * 1024 * 1024;
  /** A body (not a watch's) larger than this is not an answer the agent asks for: a page of 500 pods is a few MiB. */
  static final long MAX_BODY = 16L * 1024 * 1024;
  /** A body (not a watch's) must arrive within this many times the call's timeout: a list of hundreds of pods is parsed as it comes. */
  static final int BODY_TIMEOUTS = 6;
  /** An error answer is read this far for its Status message. */
  private static final int ERROR_BODY = 64 * 1024;

  private final URI base;
  private final HttpClient http;
  private final Optional<ServiceAccountToken> token;
  private final Duration requestTimeout;

  ApiServer(URI base, HttpClient http, Optional<ServiceAccountToken> token, Duration requestTimeout) {
    this.base = base;
    this.http = http;
    this.token = token;
    this.requestTimeout = requestTimeout;
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
    if (base.getHost() == null) {
      throw new IllegalArgumentException("quarkus.kubernetes-client.api-server-url " + url + ": no host name");
    }
    var tokenFile = serviceAccount.resolve("token");
    var ca = serviceAccount.resolve("ca.crt");
    SSLContext tls = null;
    if ("https".equals(base.getScheme())) {
      tls = trustCerts ? trustingAll() : Files.isReadable(ca) ? ServerTrust.caFile(ca) : ServerTrust.jdkDefault();
    }
    var http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CONNECT_TIMEOUT)
        .followRedirects(HttpClient.Redirect.NEVER);
    if (tls != null) {
      // The host name is checked against the certificate (RFC 2818) by the JDK's trust manager;
      // trust-certs trusts any certificate for any name (TrustAnyCertificate).
      http.sslContext(tls);
    }
    return new ApiServer(base, http.build(), Files.exists(tokenFile) ? Optional.of(new ServiceAccountToken(tokenFile)) : Optional.empty(),
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
    return tree(send("GET", path, null, null), path);
  }

  /** A JSON merge patch ({@code application/merge-patch+json}). */
  public JsonNode mergePatch(String path, String patch) {
    return tree(send("PATCH", path, "application/merge-patch+json", patch.getBytes(StandardCharsets.UTF_8)), path);
  }

  /** A POST (create) of {@code body}. */
  public JsonNode create(String path, JsonNode body) {
    return tree(send("POST", path, "application/json", Json.write(body).getBytes(StandardCharsets.UTF_8)), path);
  }

  /**
   * A watch: the response body, one event per line, until the server ends it or the reader is
   * closed, which may be done from another thread while a read waits: it ends that read. Throws {@link ApiException} when the server refuses it (410 Gone:
   * the version is too old).
   */
  public BufferedReader watch(String path) {
    // The timeout ends with the response's head: the body may be silent for the watch's whole length.
    var response = exchange("GET", path, null, null);
    checked(response, path);
    return new WatchLines(response.body());
  }

  /**
   * A watch's lines, each at most {@link #MAX_EVENT} characters (an object is at most ~1.5 MiB,
   * etcd's limit; a line without end must not fill the agent's small heap); {@link #close} closes
   * the body (and with it the connection) before it takes the reader's lock, which a waiting read
   * holds: that ends the read.
   */
  private static final class WatchLines extends BufferedReader {
    private final InputStream body;

    WatchLines(InputStream body) {
      super(new LineLimit(new InputStreamReader(body, StandardCharsets.UTF_8), MAX_EVENT));
      this.body = body;
    }

    @Override
    public void close() throws IOException {
      body.close();
      super.close();
    }
  }

  /** A query parameter's value, encoded. */
  public static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  private HttpResponse<InputStream> send(String method, String path, String contentType, byte[] body) {
    var response = exchange(method, path, contentType, body);
    checked(response, path);
    return response;
  }

  /** Nothing when the answer is 2xx; else the body's Status message, as an {@link ApiException}. */
  private static void checked(HttpResponse<InputStream> response, String path) {
    if (response.statusCode() / 100 == 2) {
      return;
    }
    byte[] body;
    try (var in = response.body()) {
      body = in.readNBytes(ERROR_BODY);
    } catch (IOException e) {
      body = new byte[0];
    }
    throw refused(response.statusCode(), body, path);
  }

  private HttpResponse<InputStream> exchange(String method, String path, String contentType, byte[] body) {
    var uri = URI.create(base + path);
    try {
      var response = http.send(request(method, uri, contentType, body), HttpResponse.BodyHandlers.ofInputStream());
      if (response.statusCode() == 401 && token.isPresent()) {
        // The token may have been replaced since it was read (an expired bound token): once more, read afresh.
        response.body().close();
        token.get().refused();
        response = http.send(request(method, uri, contentType, body), HttpResponse.BodyHandlers.ofInputStream());
      }
      return response;
    } catch (IOException e) {
      throw new ApiException(path + ": " + describe(e, uri), e);
    } catch (InterruptedException e) {
      // Its watch closed: the thread ends.
      Thread.currentThread().interrupt();
      throw new ApiException(path + ": interrupted", e);
    }
  }

  /** The request, its timeout bounding the connect, the TLS handshake and the answer's head. */
  private HttpRequest request(String method, URI uri, String contentType, byte[] body) {
    var request = HttpRequest.newBuilder(uri).timeout(requestTimeout)
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
    headers(contentType).forEach(request::header);
    return request.build();
  }

  private Map<String, String> headers(String contentType) {
    var headers = new LinkedHashMap<String, String>();
    headers.put("Accept", "application/json");
    headers.put("User-Agent", "gpu-admission-node-agent");
    if (contentType != null) {
      headers.put("Content-Type", contentType);
    }
    token.flatMap(ServiceAccountToken::current).ifPresent(t -> headers.put("Authorization", "Bearer " + t));
    return headers;
  }

  private JsonNode tree(HttpResponse<InputStream> response, String path) {
    try (var body = new BoundedBody(response.body(), MAX_BODY, requestTimeout.multipliedBy(BODY_TIMEOUTS))) {
      return Json.read(body);
    } catch (IOException e) {
      throw new ApiException(response.statusCode(), "unreadable answer from the API server for " + path + ": " + e.getMessage());
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

  private static String describe(IOException e, URI uri) {
    var message = e.getMessage();
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof java.nio.channels.UnresolvedAddressException || cause instanceof java.net.UnknownHostException) {
        return "cannot resolve the host name " + uri.getHost();
      }
    }
    if (e instanceof java.net.ConnectException) {
      return "connection refused" + (message == null || message.isBlank() ? "" : " (" + message + ")");
    }
    if (e instanceof java.net.http.HttpTimeoutException) {
      return "no answer in time";
    }
    if (e instanceof javax.net.ssl.SSLException && message != null) {
      // The JDK's words without its alert name and exception class names: "(certificate_unknown) PKIX
      // path building failed: sun.security.provider.certpath.SunCertPathBuilderException: unable to ...".
      return "TLS: " + message.replaceFirst("^\\(\\w+\\) ", "").replaceAll("\\b(?:[a-z][a-z0-9_]*\\.)+[A-Z]\\w*(?:Exception|Error): ", "");
    }
    return message == null ? e.getClass().getSimpleName() : message;
  }

  /** quarkus.kubernetes-client.trust-certs: any certificate (a test API server's own), host name unchecked. */
  private static SSLContext trustingAll() {
    try {
      return TrustAnyCertificate.context();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Closes the client's connections at once (a watch's reader then ends). */
  @Override
  public void close() {
    http.shutdownNow();
  }
}
