package io.gpuadmission.node.grpc;

import io.gpuadmission.node.deadline.DeadlineTimer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Unary gRPC calls to a server on a Unix socket (the kubelet's Registration and PodResources
 * APIs), each on a connection of its own: a call is a few hundred microseconds of connecting on
 * the node, and a kubelet that restarted (a new socket at the same path) is simply found by the
 * next call, with no reconnect state or backoff to reset.
 */
public final class GrpcClient {
  private static final int STREAM = 1;
  /** How often a call that waits for the server to listen tries to connect again. */
  private static final long CONNECT_RETRY_MILLIS = 100;

  private GrpcClient() {}

  /**
   * Calls {@code method} ({@code /package.Service/Method}) with the request's bytes and returns the
   * answer's. {@code waitForReady}: a server not listening yet is tried again until the deadline
   * (as gRPC's wait-for-ready); else that fails at once, UNAVAILABLE.
   */
  public static byte[] call(Path socket, String method, byte[] request, Duration timeout, int maxAnswer, boolean waitForReady)
      throws GrpcException {
    long deadline = System.nanoTime() + timeout.toNanos();
    // At the deadline whatever the call holds then is closed: the socket still connecting (a
    // kubelet whose backlog is full never accepts), or the connection, which ends its blocking read.
    var holding = new java.util.concurrent.atomic.AtomicReference<java.io.Closeable>();
    var expired = new java.util.concurrent.atomic.AtomicBoolean();
    var timer = DeadlineTimer.after(timeout, () -> {
      expired.set(true);
      closeQuietly(holding.get());
    });
    Http2Connection h2 = null;
    try {
      var channel = connect(socket, deadline, waitForReady, timeout, holding, expired);
      h2 = new Http2Connection(channel);
      holding.set(h2);
      if (expired.get()) {
        throw new GrpcException(GrpcException.DEADLINE_EXCEEDED, "no answer within " + timeout.toMillis() + " ms");
      }
      h2.startAsClient();
      var headers = new LinkedHashMap<String, String>();
      headers.put(":method", "POST");
      headers.put(":scheme", "http");
      headers.put(":path", method);
      headers.put(":authority", "localhost");
      headers.put("content-type", GrpcWire.CONTENT_TYPE);
      headers.put("te", "trailers");
      headers.put("grpc-timeout", Math.clamp(timeout.toMillis(), 1, 99_999_999) + "m");
      h2.sendHeaders(STREAM, headers, false);
      h2.sendData(STREAM, GrpcWire.frame(request), true);
      var answer = new Answer(maxAnswer);
      h2.readFrames(answer, answer::done);
      var result = answer.result();
      h2.goAway(Http2Connection.NO_ERROR, "");
      return result;
    } catch (IOException | RuntimeException e) {
      if (expired.get()) {
        throw new GrpcException(GrpcException.DEADLINE_EXCEEDED, "no answer within " + timeout.toMillis() + " ms");
      }
      throw new GrpcException(GrpcException.UNAVAILABLE, "connection to " + socket + " failed: " + e.getMessage());
    } finally {
      timer.cancel(false);
      if (h2 != null) {
        h2.close();
      }
    }
  }

  private static void closeQuietly(java.io.Closeable closeable) {
    if (closeable != null) {
      try {
        closeable.close();
      } catch (IOException ignored) {
        // closing is all we wanted
      }
    }
  }

  private static SocketChannel connect(Path socket, long deadline, boolean waitForReady, Duration timeout,
      java.util.concurrent.atomic.AtomicReference<java.io.Closeable> holding, java.util.concurrent.atomic.AtomicBoolean expired)
      throws GrpcException {
    while (true) {
      try {
        var channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        holding.set(channel);
        try {
          if (expired.get()) {
            throw new IOException("the deadline passed");
          }
          channel.connect(UnixDomainSocketAddress.of(socket));
          return channel;
        } catch (IOException e) {
          channel.close();
          throw e;
        }
      } catch (IOException e) {
        if (expired.get()) {
          throw new GrpcException(GrpcException.DEADLINE_EXCEEDED, "cannot connect to " + socket + " within " + timeout.toMillis() + " ms");
        }
        if (!waitForReady || System.nanoTime() + CONNECT_RETRY_MILLIS * 1_000_000 > deadline) {
          throw new GrpcException(waitForReady ? GrpcException.DEADLINE_EXCEEDED : GrpcException.UNAVAILABLE,
              "cannot connect to " + socket + (waitForReady ? " within " + timeout.toMillis() + " ms" : "") + ": " + e.getMessage());
        }
        try {
          Thread.sleep(CONNECT_RETRY_MILLIS);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw new GrpcException(GrpcException.CANCELLED, "interrupted while connecting to " + socket);
        }
      }
    }
  }

  /** The answer of stream 1 as it arrives: headers, the message, trailers. */
  private static final class Answer implements Http2Connection.Listener {
    private final int maxAnswer;
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private boolean headersSeen;
    private GrpcException failure;
    private boolean ended;

    Answer(int maxAnswer) {
      this.maxAnswer = maxAnswer;
    }

    boolean done() {
      return ended;
    }

    @Override
    public void headers(int stream, Map<String, String> headers, boolean endStream) {
      if (stream != STREAM || ended) {
        return;
      }
      if (!headersSeen) {
        headersSeen = true;
        var status = headers.getOrDefault(":status", "");
        if (!status.equals("200")) {
          fail(GrpcWire.httpStatus(status));
          return;
        }
        var type = headers.getOrDefault("content-type", "");
        if (!type.startsWith(GrpcWire.CONTENT_TYPE)) {
          fail(new GrpcException(GrpcException.UNKNOWN, "an answer of content-type '" + type + "', not gRPC"));
          return;
        }
        if (!endStream) {
          return;
        }
      }
      // Trailers (or Trailers-Only): the status.
      failure = GrpcWire.status(headers);
      ended = true;
    }

    @Override
    public void data(int stream, byte[] data, boolean endStream) {
      if (stream != STREAM || ended) {
        return;
      }
      if (body.size() + data.length > maxAnswer + 5L) {
        fail(new GrpcException(GrpcException.RESOURCE_EXHAUSTED, "an answer larger than " + maxAnswer + " bytes"));
        return;
      }
      body.write(data, 0, data.length);
      if (endStream) {
        fail(new GrpcException(GrpcException.INTERNAL, "the answer ended without trailers"));
      }
    }

    @Override
    public void goingAway(int lastStream) {
      if (lastStream < STREAM && !ended) {
        fail(new GrpcException(GrpcException.UNAVAILABLE, "the server went away before it took the call"));
      }
    }

    @Override
    public void reset(int stream, int errorCode) {
      if (stream == STREAM && !ended) {
        fail(new GrpcException(errorCode == Http2Connection.CANCEL ? GrpcException.CANCELLED : GrpcException.UNAVAILABLE,
            "the server reset the call (HTTP/2 error " + errorCode + ")"));
      }
    }

    private void fail(GrpcException e) {
      failure = e;
      ended = true;
    }

    byte[] result() throws GrpcException {
      if (!ended) {
        throw new GrpcException(GrpcException.UNAVAILABLE, "the connection ended before the answer");
      }
      if (failure != null) {
        throw failure;
      }
      return GrpcWire.unframe(body.toByteArray(), maxAnswer);
    }
  }
}
