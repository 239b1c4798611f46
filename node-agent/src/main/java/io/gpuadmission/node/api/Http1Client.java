package io.gpuadmission.node.api;

import io.gpuadmission.node.deadline.DeadlineTimer;
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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * HTTP/1.1 as the node agent speaks it to the API server, on a JDK socket, TLS by the JDK's
 * {@link SSLSocket} with the host name checked as HTTPS does (RFC 2818, by the JDK's trust
 * manager). The response's head is read here; its body is a stream that decodes
 * {@code Transfer-Encoding: chunked} or stops at {@code Content-Length}. A watch has a connection
 * of its own ({@code Connection: close}), and closing its body closes it (from any thread: that is
 * how a watch is ended). Other calls keep their connection for the next one when their body was
 * read to its end (GETs and merge patches, which the server may receive twice: a kept connection
 * closed unanswered is tried again on a new one), one idle connection at most, for a minute: a TLS handshake in the agent's
 * interpreter costs tens of milliseconds of its CPU, and the calls come in bursts (a patch per
 * container start, a job's pods together). A kept connection the server has closed meanwhile is
 * replaced by a new one before any answer is read, as Go's client does.
 *
 * <p>Hand-written for the agent's footprint: the JDK's {@code java.net.http} client, with its
 * asynchronous TLS engine and its selector thread, cost the agent ~500 classes (bench/README.md,
 * "Node agent"), and {@code HttpURLConnection} cannot send PATCH.
 */
final class Http1Client {
  /** A response head larger than this is not an API server's. */
  static final int MAX_HEAD = 64 * 1024;
  /** A body (not a watch's) larger than this is not an answer the agent asks for: a page of 500 pods is a few MiB. */
  static final long MAX_BODY = 16L * 1024 * 1024;

  /** A response: status, headers (names in lower case) and the body, which must be closed. */
  record Response(int status, Map<String, String> headers, InputStream body) implements AutoCloseable {
    @Override
    public void close() throws IOException {
      body.close();
    }
  }

  /** A body (not a watch's) must arrive within this many times the call's timeout. */
  static final int BODY_TIMEOUTS = 6;
  /** How long a connection is kept idle for the next call. */
  static final Duration KEEP_IDLE = Duration.ofMinutes(1);

  private final SSLSocketFactory tls;
  private final boolean checkHostName;
  private final Duration connectTimeout;
  private final AtomicReference<Idle> idle = new AtomicReference<>();

  /** An open connection: the socket, the TLS layer over it (or the same socket) and what is read from it. */
  record Connection(String origin, Socket raw, Socket socket, BufferedInputStream in) {
    void close() {
      try {
        raw.close();
      } catch (IOException e) {
        // closed either way
      }
    }
  }

  private record Idle(Connection connection, long since) {}

  /** A kept connection the server closed while it was idle: nothing was answered on it. */
  private static final class Stale extends IOException {
    Stale(Throwable cause) {
      super("the kept connection was closed", cause);
    }
  }

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
   * reads the response's head. {@code timeout} bounds the whole of the connect, the TLS handshake
   * and the wait for the head, however slowly the server trickles bytes; then, unless
   * {@code streaming} (a watch, which may be silent for minutes: its reader ends it), the body
   * must arrive within {@link #BODY_TIMEOUTS} times {@code timeout}, and be at most {@link #MAX_BODY} bytes.
   */
  Response exchange(String method, URI uri, Map<String, String> headers, byte[] body, Duration timeout, boolean streaming)
      throws IOException {
    var https = "https".equals(uri.getScheme());
    if (https && tls == null) {
      throw new IOException("no TLS context for " + uri);
    }
    var host = uri.getHost();
    var port = uri.getPort() != -1 ? uri.getPort() : https ? 443 : 80;
    var origin = uri.getScheme() + "://" + host + ":" + port;
    // Only a call the server may receive twice goes on a kept connection: one the server closes
    // unanswered after reading it is sent again (a merge patch sets the same annotations twice).
    if (!streaming && ("GET".equals(method) || "PATCH".equals(method))) {
      var kept = idle.getAndSet(null);
      if (kept != null && kept.connection().origin().equals(origin) && System.nanoTime() - kept.since() < KEEP_IDLE.toNanos()) {
        try {
          return send(kept.connection(), new Deadline(kept.connection().raw(), timeout), timeout, true, method, uri, headers, body, false);
        } catch (Stale e) {
          // Closed by the server while idle: a new connection, as if it had not been kept.
        }
      } else if (kept != null) {
        kept.connection().close();
      }
    }
    var raw = new Socket();
    // A per-read timeout alone lets a server that sends a byte now and then hold the call for good.
    var head = new Deadline(raw, timeout);
    var deadline = System.nanoTime() + timeout.toNanos();
    Connection connection;
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
      connection = new Connection(origin, raw, socket, new BufferedInputStream(socket.getInputStream(), 8 * 1024));
    } catch (IOException | RuntimeException e) {
      throw failed(e, head, raw);
    }
    return send(connection, head, timeout, false, method, uri, headers, body, streaming);
  }

  /** Writes the request on {@code connection} and reads the answer's head before {@code head} passes. */
  private Response send(Connection connection, Deadline head, Duration timeout, boolean kept, String method, URI uri,
      Map<String, String> headers, byte[] body, boolean streaming) throws IOException {
    var raw = connection.raw();
    var deadline = System.nanoTime() + timeout.toNanos();
    try {
      try {
        raw.setSoTimeout(remainingMillis(deadline));
        var out = connection.socket().getOutputStream();
        var https = connection.socket() != raw;
        out.write(head(method, uri, uri.getHost(), connection.origin(), https, headers, body, streaming).getBytes(StandardCharsets.ISO_8859_1));
        if (body != null) {
          out.write(body);
        }
        out.flush();
        if (kept) {
          // Its first byte tells a kept connection the server closed (end or reset) from an answer.
          connection.in().mark(1);
          if (connection.in().read() == -1) {
            throw new Stale(null);
          }
          connection.in().reset();
        }
      } catch (Stale | SocketTimeoutException e) {
        throw e;
      } catch (IOException e) {
        if (kept && !head.passed()) {
          throw new Stale(e);
        }
        throw e;
      }
      Response response;
      do {
        raw.setSoTimeout(remainingMillis(deadline));
        response = readHead(connection, streaming ? null : timeout, this);
      } while (response.status() / 100 == 1);
      head.end();
      if (head.passed()) {
        response.close();
        throw new SocketTimeoutException("no answer in time");
      }
      raw.setSoTimeout(streaming ? 0 : (int) Math.max(1, timeout.toMillis()));
      return response;
    } catch (IOException | RuntimeException e) {
      throw failed(e, head, raw);
    }
  }

  /**
   * What a call that broke off throws, its connection closed: the timeout when its deadline closed
   * the socket under it (the read then met "socket closed"), else what it met.
   */
  private static IOException failed(Exception e, Deadline head, Socket raw) {
    head.end();
    try {
      raw.close();
    } catch (IOException closing) {
      // closed either way
    }
    if (head.passed()) {
      return new SocketTimeoutException("no answer in time");
    }
    if (e instanceof IOException io) {
      return io;
    }
    throw (RuntimeException) e;
  }

  /** Closes the connection kept for the next call, if any. */
  void close() {
    var kept = idle.getAndSet(null);
    if (kept != null) {
      kept.connection().close();
    }
  }

  /** Keeps {@code connection} for the next call, closing the one kept before. */
  private void keep(Connection connection) {
    var before = idle.getAndSet(new Idle(connection, System.nanoTime()));
    if (before != null) {
      before.connection().close();
    }
  }

  /**
   * Closes the connection at its time unless ended first; whether it did is what turns the
   * "socket closed" a read then meets into the timeout it was.
   */
  static final class Deadline {
    private final Socket socket;
    private final ScheduledFuture<?> task;
    private volatile boolean passed;

    Deadline(Socket socket, Duration after) {
      this.socket = socket;
      this.task = DeadlineTimer.after(after, this::pass);
    }

    private void pass() {
      passed = true;
      try {
        socket.close();
      } catch (IOException e) {
        // closed either way
      }
    }

    void end() {
      task.cancel(false);
    }

    boolean passed() {
      return passed;
    }
  }

  private static String head(String method, URI uri, String host, String origin, boolean https, Map<String, String> headers, byte[] body,
      boolean streaming) {
    var port = Integer.parseInt(origin.substring(origin.lastIndexOf(':') + 1));
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
    // A watch's connection is its own until it ends; any other may serve the next call.
    return text.append(streaming ? "Connection: close\r\n\r\n" : "\r\n").toString();
  }

  /** The status line and headers, then the body as the headers frame it, to arrive within {@code bodyTimeout} (null: no limit). */
  private static Response readHead(Connection connection, Duration bodyTimeout, Http1Client client) throws IOException {
    var in = connection.in();
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
    // HTTP/1.1 keeps the connection unless either side says close; a watch (no body timeout) is never kept.
    var keep = bodyTimeout != null && status.startsWith("HTTP/1.1") && !headers.getOrDefault("connection", "").toLowerCase(Locale.ROOT).contains("close");
    return new Response(code, headers, body(code, headers, connection, bodyTimeout, keep ? client : null));
  }

  private static InputStream body(int status, Map<String, String> headers, Connection connection, Duration timeout, Http1Client keeper)
      throws IOException {
    var in = connection.in();
    InputStream body;
    var encoding = headers.get("transfer-encoding");
    var length = headers.get("content-length");
    if (status / 100 == 1 || status == 204 || status == 304) {
      body = InputStream.nullInputStream();
    } else if (encoding != null && !encoding.equalsIgnoreCase("identity")) {
      // The API server sends chunked alone; another coding (gzip, chunked) the agent never asks for.
      if (!encoding.equalsIgnoreCase("chunked")) {
        throw new IOException("unsupported transfer encoding: " + printable(encoding));
      }
      body = new ChunkedBody(in);
    } else if (length != null) {
      body = new LengthBody(in, contentLength(length));
    } else {
      body = in;
    }
    var ends = timeout != null && status / 100 != 1;
    // The body is read as it is parsed, in the agent's interpreter: a list of a few MiB takes seconds.
    return new ClosingBody(body, connection, ends ? new Deadline(connection.raw(), timeout.multipliedBy(BODY_TIMEOUTS)) : null,
        body == in || status / 100 == 1 ? null : keeper);
  }

  /** A Content-Length: a number, or the same number repeated ("2, 2", RFC 9110 §8.6). */
  private static long contentLength(String value) throws IOException {
    long length = -1;
    for (var part : value.split(",")) {
      long one;
      try {
        one = Long.parseLong(part.strip());
      } catch (NumberFormatException e) {
        throw new IOException("malformed Content-Length: " + printable(value));
      }
      if (one < 0 || length != -1 && one != length) {
        throw new IOException("malformed Content-Length: " + printable(value));
      }
      length = one;
    }
    return length;
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

  /**
   * The body. Closing it closes the connection (the socket, not the TLS layer's locks, so that any
   * thread can), or, when the call may keep it and the body was read to its end, keeps it for the
   * next call. With a deadline (any body but a watch's) it must arrive in time and be at most
   * {@link #MAX_BODY} bytes.
   */
  private static final class ClosingBody extends FilterInputStream {
    /** What is left unread of a body to be kept: read to its end at close rather than lose the connection. */
    private static final int DRAIN = 16 * 1024;

    private final Connection connection;
    private final Deadline deadline;
    private final Http1Client keeper;
    private long read;
    private boolean closed;

    ClosingBody(InputStream body, Connection connection, Deadline deadline, Http1Client keeper) {
      super(body);
      this.connection = connection;
      this.deadline = deadline;
      this.keeper = keeper;
    }

    @Override
    public int read() throws IOException {
      var one = new byte[1];
      return read(one, 0, 1) == -1 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int n;
      try {
        n = in.read(buffer, offset, length);
      } catch (IOException e) {
        if (deadline != null && deadline.passed()) {
          throw new SocketTimeoutException("the answer's body did not arrive in time");
        }
        throw e;
      }
      if (n > 0 && deadline != null && (read += n) > MAX_BODY) {
        throw new IOException("an answer over " + MAX_BODY / (1024 * 1024) + " MiB");
      }
      return n;
    }

    @Override
    public void close() {
      if (closed) {
        return;
      }
      closed = true;
      var drained = keeper != null && readToTheEnd();
      if (deadline != null) {
        deadline.end();
      }
      if (drained && (deadline == null || !deadline.passed())) {
        keeper.keep(connection);
      } else {
        connection.close();
      }
    }

    /** Whether the body is read to its end (a parser stops at its last brace, before a chunked body's last chunk). */
    private boolean readToTheEnd() {
      // Reads through the body's framing (skip would reach past a Content-Length body into the socket).
      var rest = new byte[1024];
      try {
        for (long drained = 0; drained <= DRAIN; ) {
          var n = in.read(rest, 0, rest.length);
          if (n == -1) {
            return true;
          }
          drained += n;
        }
        return false;
      } catch (IOException e) {
        return false;
      }
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
    public long skip(long count) throws IOException {
      var skipped = in.skip(Math.min(Math.max(0, count), left));
      left -= skipped;
      return skipped;
    }

    @Override
    public int available() throws IOException {
      return (int) Math.min(in.available(), left);
    }
  }
}
