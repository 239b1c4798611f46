package io.gpuadmission.node.grpc;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.jboss.logging.Logger;

/**
 * A gRPC server on a Unix socket for unary and server-streaming methods, as the kubelet's device
 * manager calls a device plugin. One thread accepts; each connection has one thread that reads and
 * one that runs its calls in the order they arrive (a call never runs on a reading thread: a long
 * answer waits for
 * the peer's flow-control window, which only the reading thread sees open).
 */
public final class GrpcServer implements Closeable {
  private static final Logger LOG = Logger.getLogger(GrpcServer.class);
  /** Requests here are a few hundred bytes; gRPC's own default limit. */
  static final int MAX_REQUEST = 4 << 20;

  /**
   * A unary method: the request's bytes to the answer's. An IOException (a request that is no
   * valid message) is answered INTERNAL, as grpc-java answers a request it cannot parse.
   */
  @FunctionalInterface
  public interface Unary {
    byte[] answer(byte[] request) throws GrpcException, IOException;
  }

  /** A server-streaming method: given the request, it sends on the stream until the stream ends. */
  @FunctionalInterface
  public interface ServerStreaming {
    void open(byte[] request, Stream stream) throws GrpcException, IOException;
  }

  /** One open server-streaming call. */
  public interface Stream {
    /** Sends a message; false once the call is over (cancelled by the client, or the connection gone). */
    boolean send(byte[] message);

    /** Runs {@code then} when the client cancels the call or the connection ends (at once if it has). */
    void onCancel(Runnable then);

    /** Ends the call with status OK. */
    void finish();
  }

  private final ServerSocketChannel listener;
  private final Map<String, Unary> unary;
  private final Map<String, ServerStreaming> streaming;
  // The calls thread of the call running now: where afterThisCall queues its work.
  private static final ThreadLocal<ExecutorService> CALLS = new ThreadLocal<>();
  private final Set<Connection> connections = ConcurrentHashMap.newKeySet();
  private final String name;
  private volatile boolean closed;

  private GrpcServer(ServerSocketChannel listener, String name, Map<String, Unary> unary, Map<String, ServerStreaming> streaming) {
    this.listener = listener;
    this.name = name;
    this.unary = Map.copyOf(unary);
    this.streaming = Map.copyOf(streaming);
  }

  /**
   * Listens on {@code socket} (replacing a file left there) and serves the methods, keyed by their
   * path ({@code /package.Service/Method}); threads are named after {@code name}.
   */
  public static GrpcServer start(Path socket, String name, Map<String, Unary> unary, Map<String, ServerStreaming> streaming)
      throws IOException {
    Files.deleteIfExists(socket);
    var channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      channel.bind(UnixDomainSocketAddress.of(socket));
    } catch (IOException e) {
      channel.close();
      throw e;
    }
    var server = new GrpcServer(channel, name, unary, streaming);
    daemon(server::accept, name + "-accept").start();
    return server;
  }

  private static Thread daemon(Runnable work, String name) {
    var thread = new Thread(work, name);
    thread.setDaemon(true);
    return thread;
  }

  private void accept() {
    while (!closed) {
      SocketChannel channel;
      try {
        channel = listener.accept();
      } catch (java.nio.channels.ClosedChannelException e) {
        return;
      } catch (IOException e) {
        if (closed) {
          return;
        }
        // Out of file descriptors, say: the socket must go on being served once that passes.
        LOG.warnf("%s: cannot accept a connection (%s); trying again in 1 s", name, e.getMessage());
        try {
          Thread.sleep(1000);
        } catch (InterruptedException interrupted) {
          return;
        }
        continue;
      }
      var connection = new Connection(new Http2Connection(channel));
      connections.add(connection);
      if (closed) {
        connection.h2.close();
      }
      daemon(connection, name + "-connection").start();
    }
  }

  /**
   * Runs {@code work} on the calling connection's calls thread after the calls queued so far: a
   * method that queues it has its answer sent first, and any call on that connection that arrives
   * after that answer runs after the work. Outside a call it runs at once.
   */
  public static void afterThisCall(Runnable work) {
    var calls = CALLS.get();
    try {
      if (calls != null) {
        calls.execute(work);
        return;
      }
    } catch (RejectedExecutionException stopping) {
      // the connection ended: do it here
    }
    work.run();
  }

  /** Stops listening and ends every connection (open streams see their cancel) and its calls thread. */
  @Override
  public void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException ignored) {
      // nothing more to release
    }
    connections.forEach(c -> c.h2.close());
  }

  /**
   * One client connection and its calls. Its thread reads; its calls run on a thread of its own, so
   * that a client that stops reading holds up only its own calls.
   */
  private final class Connection implements Runnable, Http2Connection.Listener {
    private final Http2Connection h2;
    private final Map<Integer, Call> open = new ConcurrentHashMap<>();
    private final ExecutorService calls = Executors.newSingleThreadExecutor(r -> daemon(r, name));
    private int lastStream;

    Connection(Http2Connection h2) {
      this.h2 = h2;
    }

    @Override
    public void run() {
      try {
        h2.startAsServer();
        h2.readFrames(this, () -> closed);
      } catch (IOException e) {
        if (!closed) {
          LOG.debugf("%s: connection ended: %s", name, e.getMessage());
        }
      } catch (RuntimeException e) {
        LOG.warnf("%s: connection ended on a frame it could not take: %s", name, e);
      } finally {
        h2.close();
        connections.remove(this);
        open.values().forEach(Call::cancelled);
        open.clear();
        calls.shutdown();
      }
    }

    @Override
    public void headers(int stream, Map<String, String> headers, boolean endStream) throws IOException {
      var call = open.get(stream);
      if (call == null) {
        if (stream % 2 == 0 || stream <= lastStream) {
          // Not a new client stream: a stream already ended (its trailers crossed our reset).
          return;
        }
        lastStream = stream;
        call = new Call(this, stream, headers.getOrDefault(":path", ""));
        open.put(stream, call);
        h2.opened(stream);
      }
      if (endStream) {
        dispatch(call);
      }
    }

    @Override
    public void data(int stream, byte[] data, boolean endStream) throws IOException {
      var call = open.get(stream);
      if (call == null) {
        return;
      }
      if (call.body.size() + data.length > MAX_REQUEST + 5) {
        open.remove(stream);
        call.answerOnce(new GrpcException(GrpcException.RESOURCE_EXHAUSTED, "a request larger than " + MAX_REQUEST + " bytes"));
        return;
      }
      call.body.write(data);
      if (endStream) {
        dispatch(call);
      }
    }

    @Override
    public void reset(int stream, int errorCode) {
      var call = open.remove(stream);
      if (call != null) {
        call.cancelled();
      }
    }

    private void dispatch(Call call) {
      try {
        calls.execute(() -> {
          CALLS.set(calls);
          try {
            call.run();
          } finally {
            CALLS.remove();
          }
        });
      } catch (RejectedExecutionException stopping) {
        call.cancelled();
      }
    }
  }

  /** One call: its request as it arrives, then its answer or its stream. */
  private final class Call implements Stream {
    private final Connection connection;
    private final int stream;
    private final String path;
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    // Guarded by this.
    private boolean headersSent;
    private boolean over;
    private Runnable onCancel;
    private boolean cancelRun;

    Call(Connection connection, int stream, String path) {
      this.connection = connection;
      this.stream = stream;
      this.path = path;
    }

    void run() {
      var unaryMethod = unary.get(path);
      var streamingMethod = streaming.get(path);
      if (unaryMethod == null && streamingMethod == null) {
        answerOnce(new GrpcException(GrpcException.UNIMPLEMENTED, "unknown method " + path));
        return;
      }
      try {
        var request = GrpcWire.unframe(body.toByteArray(), MAX_REQUEST);
        if (unaryMethod != null) {
          var answer = unaryMethod.answer(request);
          if (send(answer)) {
            finish();
          }
        } else {
          streamingMethod.open(request, this);
        }
      } catch (GrpcException e) {
        answerOnce(e);
      } catch (IOException e) {
        answerOnce(new GrpcException(GrpcException.INTERNAL, "cannot read the request of " + path + ": " + e.getMessage()));
      } catch (RuntimeException e) {
        LOG.errorf(e, "%s: %s failed", name, path);
        answerOnce(new GrpcException(GrpcException.INTERNAL, path + " failed: " + e));
      }
    }

    @Override
    public synchronized boolean send(byte[] message) {
      if (over) {
        return false;
      }
      try {
        if (!headersSent) {
          connection.h2.sendHeaders(stream, GrpcWire.responseHeaders(), false);
          headersSent = true;
        }
        connection.h2.sendData(stream, GrpcWire.frame(message), false);
        return true;
      } catch (IOException e) {
        LOG.warnf("%s: cannot send on %s (%s): the call is reset", name, path, e.getMessage());
        // The client must learn that its stream ends here (a ListAndWatch it would otherwise wait
        // on for good); then it is as if it had cancelled.
        try {
          connection.h2.reset(stream, Http2Connection.CANCEL);
        } catch (IOException gone) {
          // the connection is gone: the client sees that
        }
        cancelled();
        return false;
      }
    }

    @Override
    public synchronized void finish() {
      if (over) {
        return;
      }
      try {
        if (!headersSent) {
          connection.h2.sendHeaders(stream, GrpcWire.responseHeaders(), false);
          headersSent = true;
        }
        connection.h2.sendHeaders(stream, GrpcWire.trailers(0, ""), true);
      } catch (IOException e) {
        LOG.debugf("%s: cannot end %s: %s", name, path, e.getMessage());
      }
      end();
    }

    /** An error status: trailers alone when nothing was sent yet (gRPC's Trailers-Only), else after. */
    synchronized void answerOnce(GrpcException status) {
      if (over) {
        return;
      }
      try {
        var trailers = headersSent ? new java.util.LinkedHashMap<String, String>() : GrpcWire.responseHeaders();
        trailers.putAll(GrpcWire.trailers(status.code(), status.description()));
        connection.h2.sendHeaders(stream, trailers, true);
      } catch (IOException e) {
        LOG.debugf("%s: cannot answer %s: %s", name, path, e.getMessage());
      }
      end();
    }

    private void end() {
      over = true;
      connection.open.remove(stream, this);
      connection.h2.forget(stream);
    }

    @Override
    public void onCancel(Runnable then) {
      boolean now;
      synchronized (this) {
        onCancel = then;
        now = over && !cancelRun;
        cancelRun |= now;
      }
      if (now) {
        then.run();
      }
    }

    /** The client cancelled, or the connection ended: no more sending, and the cancel handler runs once. */
    void cancelled() {
      // First, without this call's lock: a send waiting for the stream's window holds it, and
      // forgetting the stream is what wakes that send (it then fails).
      connection.h2.forget(stream);
      Runnable then;
      synchronized (this) {
        over = true;
        connection.open.remove(stream, this);
        if (cancelRun) {
          return;
        }
        cancelRun = true;
        then = onCancel;
      }
      if (then != null) {
        then.run();
      }
    }
  }
}
