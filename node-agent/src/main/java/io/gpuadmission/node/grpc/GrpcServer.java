package io.gpuadmission.node.grpc;

import io.gpuadmission.node.deadline.DeadlineTimer;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * answer waits for the peer's flow-control window, which only the reading thread sees open).
 *
 * <p>What a client may hold is bounded ({@link Limits}): the connections open at once, the time to
 * start HTTP/2, the time a connection may stay with no stream open, the streams open at once on a
 * connection ({@link #MAX_STREAMS}) and the request bytes its calls hold ({@link #MAX_REQUEST}).
 * Their deadlines all run on the agent's one timer thread ({@link DeadlineTimer}).
 */
public final class GrpcServer implements Closeable {
  private static final Logger LOG = Logger.getLogger(GrpcServer.class);
  /**
   * Requests here are a few hundred bytes; gRPC's own default limit, for one request and for all
   * the requests a connection's open calls hold at once.
   */
  static final int MAX_REQUEST = 4 << 20;
  /**
   * The streams a client may have open at once on a connection (SETTINGS_MAX_CONCURRENT_STREAMS;
   * more are refused): the kubelet keeps one ListAndWatch and makes one call at a time beside it,
   * and RFC 9113 section 6.5.2 advises no fewer than 100.
   */
  static final int MAX_STREAMS = 100;
  /** After the GOAWAY that ends an idle connection, how long the client has to close it itself. */
  static final Duration DRAIN_GRACE = Duration.ofSeconds(5);

  /**
   * What the server allows its clients.
   *
   * @param maxConnections connections open at once; one more is closed as soon as it is accepted
   * @param prefaceTimeout from accept to the client's preface and first SETTINGS
   * @param idleTimeout how long a connection may stay with no stream open before the server ends
   *     it with a GOAWAY (grpc-go's MaxConnectionIdle); a connection with an open stream, however
   *     quiet, is never idle
   * @param stalledWriteTimeout how long a write to the client may wait (the client does not read)
   *     before the connection is closed; checked every half of it
   */
  public record Limits(int maxConnections, Duration prefaceTimeout, Duration idleTimeout, Duration stalledWriteTimeout) {
    /**
     * The kubelet opens one connection to a plugin (two for a moment when it restarts): eight
     * leaves room and bounds the threads to sixteen (~1.6 MiB). Its grpc-go client writes its
     * preface as soon as it has connected, and its device manager gives up a dial after 10 s
     * anyway; grpc-go's own server allows 120 s, made for networks, not a local socket. Five
     * minutes of no stream is no kubelet's (its ListAndWatch is always open); a client that made
     * a call and went quiet reconnects at its next, as gRPC does after a GOAWAY. A write is held
     * only by a client that does not read (grpc-go reads all the time, whatever its application
     * does): 30 s of that is a kubelet that is stopped, and without the limit a client that never
     * reads would hold its connection, and its place under the cap, for good.
     */
    public static final Limits DEFAULT = new Limits(8, Duration.ofSeconds(10), Duration.ofMinutes(5), Duration.ofSeconds(30));
  }

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
  private final Limits limits;
  private volatile boolean closed;
  // Accepting thread only: connections refused since the last one served.
  private int refused;

  private GrpcServer(ServerSocketChannel listener, String name, Limits limits, Map<String, Unary> unary,
      Map<String, ServerStreaming> streaming) {
    this.listener = listener;
    this.name = name;
    this.limits = limits;
    this.unary = Map.copyOf(unary);
    this.streaming = Map.copyOf(streaming);
  }

  /**
   * Listens on {@code socket} (replacing a file left there) and serves the methods, keyed by their
   * path ({@code /package.Service/Method}); threads are named after {@code name}.
   */
  public static GrpcServer start(Path socket, String name, Map<String, Unary> unary, Map<String, ServerStreaming> streaming)
      throws IOException {
    return start(socket, name, Limits.DEFAULT, unary, streaming);
  }

  /** As {@link #start(Path, String, Map, Map)}, with limits of its own. */
  public static GrpcServer start(Path socket, String name, Limits limits, Map<String, Unary> unary,
      Map<String, ServerStreaming> streaming) throws IOException {
    Files.deleteIfExists(socket);
    var channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      channel.bind(UnixDomainSocketAddress.of(socket));
    } catch (IOException e) {
      channel.close();
      throw e;
    }
    var server = new GrpcServer(channel, name, limits, unary, streaming);
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
      if (connections.size() >= limits.maxConnections()) {
        refuse(channel);
        continue;
      }
      if (refused > 0) {
        LOG.infof("%s: serving connections again, after refusing %d", name, refused);
        refused = 0;
      }
      var connection = new Connection(new Http2Connection(channel));
      connections.add(connection);
      connection.deadline = DeadlineTimer.after(limits.prefaceTimeout(), connection::prefaceExpired);
      if (closed) {
        connection.h2.close();
      }
      daemon(connection, name + "-connection").start();
    }
  }

  /** Closes a connection beyond the cap at once; says so once for a run of them, not for each. */
  private void refuse(SocketChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // it is gone either way
    }
    if (refused++ == 0) {
      LOG.warnf("%s: %d connections open, the most this socket serves: refusing more until one closes "
          + "(a connection that does not start HTTP/2 within %d s is closed; one with no call open for %d s too)",
          name, limits.maxConnections(), limits.prefaceTimeout().toSeconds(), limits.idleTimeout().toSeconds());
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
    // The preface's deadline, then the next idle check, then the drain's end.
    private volatile java.util.concurrent.Future<?> deadline;
    private volatile boolean started;
    // Guarded by this: written by the reading thread, read by the timer's.
    private int lastStream;
    private long idleSince = System.nanoTime();
    private boolean draining;
    private boolean ended;
    private long heldRequestBytes;
    // Calls handed to the calls thread and not started: a call the client resets leaves `open` at
    // once but stays queued, so a client resetting calls as fast as it opens them is bounded here.
    private final java.util.concurrent.atomic.AtomicInteger queued = new java.util.concurrent.atomic.AtomicInteger();

    Connection(Http2Connection h2) {
      this.h2 = h2;
    }

    @Override
    public void run() {
      try {
        h2.startAsServer(MAX_STREAMS);
        started = true;
        deadline.cancel(false);
        checkAgainIn(limits.idleTimeout());
        h2.readFrames(this, () -> closed);
      } catch (IOException e) {
        if (!closed) {
          LOG.debugf("%s: connection ended: %s", name, e.getMessage());
        }
      } catch (RuntimeException e) {
        LOG.warnf("%s: connection ended on a frame it could not take: %s", name, e);
      } finally {
        synchronized (this) {
          ended = true;
        }
        deadline.cancel(false);
        h2.close();
        connections.remove(this);
        open.values().forEach(Call::cancelled);
        open.clear();
        calls.shutdown();
      }
    }

    /** At the preface's deadline: a client that has not started HTTP/2 by now is no gRPC client. */
    private void prefaceExpired() {
      if (!started) {
        LOG.debugf("%s: no HTTP/2 preface within %d ms: connection closed", name, limits.prefaceTimeout().toMillis());
        h2.close();
      }
    }

    /**
     * On the timer: a connection whose write has waited for the client to read longer than the
     * limit is closed (the writing call then fails and is cancelled). One with no stream open for
     * the idle limit is ended as grpc-go's MaxConnectionIdle ends it, with a GOAWAY that tells the
     * client which streams were taken, and closed after a grace if the client does not close it
     * first. Else the next check is set.
     */
    private void check() {
      if (h2.stalledWriteNanos() > limits.stalledWriteTimeout().toNanos()) {
        LOG.warnf("%s: the client has not read for %d ms: connection closed", name, limits.stalledWriteTimeout().toMillis());
        h2.close();
        return;
      }
      Duration next = null;
      int last;
      synchronized (this) {
        if (ended || draining) {
          return;
        }
        long left = idleSince + limits.idleTimeout().toNanos() - System.nanoTime();
        if (!open.isEmpty()) {
          next = limits.idleTimeout();
        } else if (left > 0) {
          next = Duration.ofNanos(left);
        } else {
          draining = true;
        }
        last = lastStream;
      }
      if (next != null) {
        checkAgainIn(next);
        return;
      }
      LOG.debugf("%s: no call open for %d ms: connection ended", name, limits.idleTimeout().toMillis());
      deadline = DeadlineTimer.after(DRAIN_GRACE, h2::close);
      try {
        // Written on the connection's calls thread, not the timer's: a client that does not read
        // would hold the timer in the write (the grace's close then ends that write).
        calls.execute(() -> h2.goAway(last, Http2Connection.NO_ERROR, "max_idle"));
      } catch (RejectedExecutionException over) {
        h2.close();
      }
    }

    /** The next check: when the connection may have become idle, or sooner to see a stalled write. */
    private void checkAgainIn(Duration untilIdle) {
      var stallCheck = limits.stalledWriteTimeout().dividedBy(2);
      deadline = DeadlineTimer.after(untilIdle.compareTo(stallCheck) < 0 ? untilIdle : stallCheck, this::check);
    }

    @Override
    public void headers(int stream, Map<String, String> headers, boolean endStream) throws IOException {
      var call = open.get(stream);
      if (call == null) {
        if (stream % 2 == 0 || stream <= lastStream) {
          // Not a new client stream: a stream already ended (its trailers crossed our reset).
          return;
        }
        synchronized (this) {
          if (draining) {
            // After our GOAWAY: not taken, which the GOAWAY's last stream told the client.
            return;
          }
          lastStream = stream;
          if (open.size() < MAX_STREAMS && queued.get() < MAX_STREAMS) {
            call = new Call(this, stream, headers.getOrDefault(":path", ""));
            open.put(stream, call);
          }
        }
        if (call == null) {
          // RFC 9113 section 5.1.2: beyond what our SETTINGS allow; the client may try it again.
          h2.reset(stream, Http2Connection.REFUSED_STREAM);
          return;
        }
        h2.opened(stream);
      } else if (call.requestEnded) {
        streamClosed(call);
        return;
      }
      if (endStream) {
        call.requestEnded = true;
        dispatch(call);
      }
    }

    @Override
    public void data(int stream, byte[] data, boolean endStream) throws IOException {
      var call = open.get(stream);
      if (call == null) {
        return;
      }
      if (call.requestEnded) {
        streamClosed(call);
        return;
      }
      if (call.body.size() + data.length > MAX_REQUEST + 5) {
        call.answerOnce(new GrpcException(GrpcException.RESOURCE_EXHAUSTED, "a request larger than " + MAX_REQUEST + " bytes"));
        return;
      }
      if (!hold(call, data.length)) {
        call.answerOnce(new GrpcException(GrpcException.RESOURCE_EXHAUSTED,
            "requests of more than " + MAX_REQUEST + " bytes in all on one connection"));
        return;
      }
      call.body.write(data);
      if (endStream) {
        call.requestEnded = true;
        dispatch(call);
      }
    }

    /**
     * A frame other than WINDOW_UPDATE, PRIORITY or RST_STREAM on a stream whose request ended
     * (half-closed, RFC 9113 section 5.1): a stream error STREAM_CLOSED, never the call run again.
     */
    private void streamClosed(Call call) throws IOException {
      call.cancelled();
      h2.reset(call.stream, Http2Connection.STREAM_CLOSED);
    }

    /** Counts a request's bytes against what the connection's calls may hold at once. */
    private synchronized boolean hold(Call call, int bytes) {
      if (heldRequestBytes + bytes > MAX_REQUEST + 5) {
        return false;
      }
      heldRequestBytes += bytes;
      call.held += bytes;
      return true;
    }

    /** A call is over: its request's bytes are free, and with the last call the idle time starts. */
    private synchronized void removed(Call call) {
      if (open.remove(call.stream, call)) {
        heldRequestBytes -= call.held;
        if (open.isEmpty()) {
          idleSince = System.nanoTime();
        }
      }
    }

    @Override
    public void reset(int stream, int errorCode) {
      var call = open.get(stream);
      if (call != null) {
        call.cancelled();
      }
    }

    private void dispatch(Call call) {
      queued.incrementAndGet();
      try {
        calls.execute(() -> {
          queued.decrementAndGet();
          CALLS.set(calls);
          try {
            call.run();
          } finally {
            CALLS.remove();
          }
        });
      } catch (RejectedExecutionException stopping) {
        queued.decrementAndGet();
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
    // The reading thread's: the client has sent all of its request (END_STREAM).
    private boolean requestEnded;
    // Guarded by the connection.
    private long held;
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
      synchronized (this) {
        if (over) {
          // Reset by the client (or its connection gone) before it started: nobody wants its answer.
          return;
        }
      }
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
        LOG.warnf("%s: cannot send on %s (%s): the call is reset", name, path,
            e instanceof java.nio.channels.ClosedChannelException ? "the connection is closed"
                : e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName());
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
      connection.removed(this);
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
        connection.removed(this);
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
