package io.gpuadmission.node.api;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * HTTP/1.1 as the node agent speaks it to the API server: one request per connection
 * ({@code Connection: close}), on a JDK socket, TLS by the JDK's {@link SSLSocket} with the host
 * name checked as HTTPS does (RFC 2818, by the JDK's trust manager). The response's head is read
 * here; its body is a stream that decodes {@code Transfer-Encoding: chunked} or stops at
 * {@code Content-Length}, and closing it closes the connection (from any thread: that is how a
 * watch is ended).
 *
 * <p>Hand-written for the agent's footprint: the JDK's {@code java.net.http} client, with its
 * asynchronous TLS engine and its selector thread, cost the agent ~500 classes (bench/README.md,
 * "Node agent"), and {@code HttpURLConnection} cannot send PATCH. The agent makes a handful of
 * calls a minute (a patch per container start, a watch every few minutes), so a connection per
 * call costs it nothing it would notice; TLS sessions are resumed by the SSL context's cache.
 */
final class Http1Client {
  /** A response head larger than this is not an API server's. */
  static final int MAX_HEAD = 64 * 1024;

  /** A response: status, headers (names in lower case) and the body, which must be closed. */
  record Response(int status, Map<String, String> headers, InputStream body) implements AutoCloseable {
    @Override
    public void close() throws IOException {
      body.close();
    }
  }

  private final SSLSocketFactory tls;
  private final boolean checkHostName;
  private final Duration connectTimeout;

  /**
   * A client; {@code tls} for https URLs (null: http only), whose host names are checked against
   * the server's certificate unless {@code checkHostName} is false (a certificate trusted whatever it is).
   */
  Http1Client(SSLSocketFactory tls, boolean checkHostName, Duration connectTimeout) {
    this.tls = tls;
    this.checkHostName = checkHostName;
    this.connectTimeout = connectTimeout;
  }

  /**
   * Sends {@code method} to {@code uri} with {@code headers} and {@code body} (null: none) and
   * reads the response's head. {@code timeout} bounds the connect, the TLS handshake and the wait
   * for the head, and then each read of the body unless {@code streaming} (a watch, which may be
   * silent for minutes: its reader ends it).
   */
  Response exchange(String method, URI uri, Map<String, String> headers, byte[] body, Duration timeout, boolean streaming)
      throws IOException {
    var https = "https".equals(uri.getScheme());
    if (https && tls == null) {
      throw new IOException("no TLS context for " + uri);
    }
    var host = uri.getHost();
    var port = uri.getPort() != -1 ? uri.getPort() : https ? 443 : 80;
    var deadline = System.nanoTime() + timeout.toNanos();
    var raw = new Socket();
    try {
      raw.setTcpNoDelay(true);
      raw.connect(new InetSocketAddress(host, port), (int) Math.max(1, Math.min(connectTimeout.toMillis(), timeout.toMillis())));
      var socket = raw;
      if (https) {
        raw.setSoTimeout(remainingMillis(deadline));
        // The host name as written (not a resolved address): what SNI sends and what the certificate must name.
        var secure = (SSLSocket) tls.createSocket(raw, unbracketed(host), port, true);
        if (checkHostName) {
          var parameters = secure.getSSLParameters();
          parameters.setEndpointIdentificationAlgorithm("HTTPS");
          secure.setSSLParameters(parameters);
        }
        secure.startHandshake();
        socket = secure;
      }
      var out = socket.getOutputStream();
      out.write(head(method, uri, host, port, https, headers, body).getBytes(StandardCharsets.ISO_8859_1));
      if (body != null) {
        out.write(body);
      }
      out.flush();
      var in = new BufferedInputStream(socket.getInputStream(), 8 * 1024);
      Response response;
      do {
        raw.setSoTimeout(remainingMillis(deadline));
        response = readHead(in, raw);
      } while (response.status() / 100 == 1);
      raw.setSoTimeout(streaming ? 0 : (int) Math.max(1, timeout.toMillis()));
      return response;
    } catch (IOException | RuntimeException e) {
      raw.close();
      throw e;
    }
  }

  private static String head(String method, URI uri, String host, int port, boolean https, Map<String, String> headers, byte[] body) {
    var target = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
    if (uri.getRawQuery() != null) {
      target += "?" + uri.getRawQuery();
    }
    var text = new StringBuilder(256).append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
    text.append("Host: ").append(host).append(port == (https ? 443 : 80) ? "" : ":" + port).append("\r\n");
    text.append("User-Agent: gpu-admission-node-agent\r\n");
    for (var header : headers.entrySet()) {
      text.append(header.getKey()).append(": ").append(header.getValue()).append("\r\n");
    }
    if (body != null) {
      text.append("Content-Length: ").append(body.length).append("\r\n");
    }
    return text.append("Connection: close\r\n\r\n").toString();
  }

  /** The status line and headers, then the body as the headers frame it. */
  private static Response readHead(InputStream in, Socket raw) throws IOException {
    var budget = new int[] {MAX_HEAD};
    var status = line(in, budget);
    // "HTTP/1.1 200 OK": the version, a space, three digits.
    if (!status.startsWith("HTTP/1.") || status.length() < 12 || status.charAt(8) != ' ') {
      throw new IOException("not an HTTP/1.x response: " + printable(status));
    }
    int code;
    try {
      code = Integer.parseInt(status.substring(9, 12));
    } catch (NumberFormatException e) {
      throw new IOException("not an HTTP/1.x response: " + printable(status));
    }
    var headers = new TreeMap<String, String>();
    for (var line = line(in, budget); !line.isEmpty(); line = line(in, budget)) {
      var colon = line.indexOf(':');
      if (colon <= 0) {
        throw new IOException("malformed response header: " + printable(line));
      }
      var name = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
      var value = line.substring(colon + 1).strip();
      headers.merge(name, value, (a, b) -> a + ", " + b);
    }
    return new Response(code, headers, body(code, headers, in, raw));
  }

  private static InputStream body(int status, Map<String, String> headers, InputStream in, Socket raw) throws IOException {
    InputStream body;
    var encoding = headers.get("transfer-encoding");
    var length = headers.get("content-length");
    if (status / 100 == 1 || status == 204 || status == 304) {
      body = InputStream.nullInputStream();
    } else if (encoding != null && !encoding.equalsIgnoreCase("identity")) {
      // RFC 9112 §6.3: with any transfer coding, chunked must be the last one; the API server sends only chunked.
      if (!encoding.toLowerCase(Locale.ROOT).endsWith("chunked")) {
        throw new IOException("unsupported transfer encoding: " + printable(encoding));
      }
      body = new ChunkedBody(in);
    } else if (length != null) {
      long expected;
      try {
        expected = Long.parseLong(length);
      } catch (NumberFormatException e) {
        throw new IOException("malformed Content-Length: " + printable(length));
      }
      if (expected < 0) {
        throw new IOException("malformed Content-Length: " + printable(length));
      }
      body = new LengthBody(in, expected);
    } else {
      body = in;
    }
    return new ClosingBody(body, raw);
  }

  /** One line of the head (CRLF or LF ended), counted against what the head may take. */
  private static String line(InputStream in, int[] budget) throws IOException {
    var line = new ByteArrayOutputStream(64);
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b == -1) {
        throw new IOException("the connection ended in the response's head");
      }
      if (--budget[0] < 0) {
        throw new IOException("response head over " + MAX_HEAD + " bytes");
      }
      line.write(b);
    }
    budget[0]--;
    var text = line.toString(StandardCharsets.ISO_8859_1);
    return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
  }

  private static int remainingMillis(long deadline) throws SocketTimeoutException {
    var left = (deadline - System.nanoTime()) / 1_000_000;
    if (left <= 0) {
      throw new SocketTimeoutException("no answer in time");
    }
    return (int) Math.min(Integer.MAX_VALUE, left);
  }

  private static String unbracketed(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  private static String printable(String text) {
    var cut = text.length() > 100 ? text.substring(0, 100) + "..." : text;
    return cut.replaceAll("[^\\x20-\\x7e]", "?");
  }

  /** The body's end closes the connection; so does {@link #close} from any thread (the socket, not the TLS layer's locks). */
  private static final class ClosingBody extends FilterInputStream {
    private final Socket raw;

    ClosingBody(InputStream body, Socket raw) {
      super(body);
      this.raw = raw;
    }

    @Override
    public void close() throws IOException {
      raw.close();
    }
  }

  /** A body of {@code Content-Length} bytes: ending sooner is an error, not a short body. */
  private static final class LengthBody extends FilterInputStream {
    private long left;

    LengthBody(InputStream in, long length) {
      super(in);
      this.left = length;
    }

    @Override
    public int read() throws IOException {
      if (left == 0) {
        return -1;
      }
      var b = in.read();
      if (b == -1) {
        throw new IOException("the connection ended " + left + " bytes before the body's end");
      }
      left--;
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      if (length == 0) {
        return 0;
      }
      if (left == 0) {
        return -1;
      }
      var n = in.read(buffer, offset, (int) Math.min(length, left));
      if (n == -1) {
        throw new IOException("the connection ended " + left + " bytes before the body's end");
      }
      left -= n;
      return n;
    }

    @Override
    public int available() throws IOException {
      return (int) Math.min(in.available(), left);
    }
  }
}
