package io.gpuadmission.node.grpc;

import com.twitter.hpack.Decoder;
import com.twitter.hpack.Encoder;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One HTTP/2 connection (RFC 9113) in cleartext with prior knowledge, as gRPC uses it on the
 * kubelet's Unix sockets: frames, HPACK header blocks, settings, pings and flow control. The
 * caller's thread runs {@link #readFrames} and gets each stream's headers and data through the
 * {@link Listener}; any thread may send.
 *
 * <p>Flow control: every DATA frame received is handed back at once (WINDOW_UPDATE on the
 * stream and on the connection), so the peer's window never shrinks: gRPC's messages here are
 * taken whole into memory anyway, bounded by {@code maxMessage}. Sending waits for the peer's
 * windows, as a peer that reads slowly asks.
 */
final class Http2Connection implements Closeable {
  static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  static final int DATA = 0x0;
  static final int HEADERS = 0x1;
  static final int RST_STREAM = 0x3;
  static final int SETTINGS = 0x4;
  static final int PUSH_PROMISE = 0x5;
  static final int PING = 0x6;
  static final int GOAWAY = 0x7;
  static final int WINDOW_UPDATE = 0x8;
  static final int CONTINUATION = 0x9;

  static final int FLAG_END_STREAM = 0x1;
  static final int FLAG_ACK = 0x1;
  static final int FLAG_END_HEADERS = 0x4;
  static final int FLAG_PADDED = 0x8;
  static final int FLAG_PRIORITY = 0x20;

  static final int SETTINGS_HEADER_TABLE_SIZE = 0x1;
  static final int SETTINGS_ENABLE_PUSH = 0x2;
  static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
  static final int SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
  static final int SETTINGS_MAX_FRAME_SIZE = 0x5;
  static final int SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

  static final int NO_ERROR = 0x0;
  static final int PROTOCOL_ERROR = 0x1;
  static final int FLOW_CONTROL_ERROR = 0x3;
  static final int STREAM_CLOSED = 0x5;
  static final int FRAME_SIZE_ERROR = 0x6;
  static final int REFUSED_STREAM = 0x7;
  static final int CANCEL = 0x8;
  static final int COMPRESSION_ERROR = 0x9;

  /** The largest frame either side sends unless the other allows more: we never allow more. */
  static final int DEFAULT_MAX_FRAME = 16_384;
  static final int DEFAULT_WINDOW = 65_535;
  /** Header lists here are a few short gRPC headers; Go's gRPC sends well under this. */
  static final int MAX_HEADER_LIST = 16_384;
  /** How long a sender waits for the peer to open its window before giving the stream up. */
  static final long SEND_WINDOW_WAIT_MILLIS = 10_000;

  /** What the reading thread hands on. */
  interface Listener {
    void headers(int stream, Map<String, String> headers, boolean endStream) throws IOException;

    void data(int stream, byte[] data, boolean endStream) throws IOException;

    /** The peer reset the stream. */
    void reset(int stream, int errorCode);

    /** The peer goes away: streams above {@code lastStream} will not be answered; those below may still be. */
    default void goingAway(int lastStream) {}
  }

  private final SocketChannel channel;
  private final DataInputStream in;
  private final Object sending = new Object();
  // Never indexes into the peer's table: nothing to keep in step when the peer changes its size.
  private final Encoder encoder = new Encoder(0);
  private final Decoder decoder = new Decoder(MAX_HEADER_LIST, 4096);
  // Guarded by sending.
  private int peerMaxFrame = DEFAULT_MAX_FRAME;
  private int peerInitialWindow = DEFAULT_WINDOW;
  private long connectionWindow = DEFAULT_WINDOW;
  private final Map<Integer, long[]> streamWindows = new HashMap<>();
  private volatile boolean closed;
  // When the write under way began (System.nanoTime(), never 0), 0 when none is.
  private volatile long writingSince;

  Http2Connection(SocketChannel channel) {
    this.channel = channel;
    // Straight on the channel, not Channels.newInputStream/newOutputStream: reading and writing go
    // on at once from different threads, and the channel keeps separate locks for each.
    this.in = new DataInputStream(new BufferedInputStream(new InputStream() {
      @Override
      public int read() throws IOException {
        var one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        return len == 0 ? 0 : channel.read(ByteBuffer.wrap(b, off, len));
      }
    }, 32 * 1024));
  }

  /** The client's side of the start: the preface, then our settings. */
  void startAsClient() throws IOException {
    synchronized (sending) {
      write(ByteBuffer.wrap(PREFACE));
      writeSettings();
    }
  }

  /**
   * The server's side: reads the client's preface, sends our settings (the most streams the client
   * may open at once among them), and takes the client's first SETTINGS, which RFC 9113 section
   * 3.4 makes part of its preface. Returns once the connection has started.
   */
  void startAsServer(int maxStreams) throws IOException {
    var preface = new byte[PREFACE.length];
    in.readFully(preface);
    if (!Arrays.equals(preface, PREFACE)) {
      throw new IOException("not an HTTP/2 client preface (a gRPC client speaks HTTP/2 with prior knowledge)");
    }
    synchronized (sending) {
      writeSettings(maxStreams);
    }
    var header = new byte[9];
    in.readFully(header);
    if ((header[3] & 0xff) != SETTINGS || (header[4] & FLAG_ACK) != 0) {
      throw protocolError("a client preface not followed by SETTINGS");
    }
    readFrame(header, null);
  }

  private void writeSettings() throws IOException {
    writeSettings(0);
  }

  /** Our settings; {@code maxStreams} 0 leaves the number of streams the peer may open unsaid. */
  private void writeSettings(int maxStreams) throws IOException {
    var payload = ByteBuffer.allocate(18);
    payload.putShort((short) SETTINGS_ENABLE_PUSH).putInt(0);
    payload.putShort((short) SETTINGS_MAX_HEADER_LIST_SIZE).putInt(MAX_HEADER_LIST);
    if (maxStreams > 0) {
      payload.putShort((short) SETTINGS_MAX_CONCURRENT_STREAMS).putInt(maxStreams);
    }
    writeFrame(SETTINGS, 0, 0, payload.array(), 0, payload.position());
  }

  /**
   * Reads frames until the connection ends or {@code done} says to stop; settings, pings and
   * window updates are answered here. Returns normally at a GOAWAY or end of input.
   */
  void readFrames(Listener listener, java.util.function.BooleanSupplier done) throws IOException {
    var header = new byte[9];
    while (!done.getAsBoolean()) {
      try {
        in.readFully(header);
      } catch (EOFException end) {
        return;
      }
      readFrame(header, listener);
    }
  }

  /** Reads the payload of the frame whose 9-byte header was just read, and acts on it. */
  private void readFrame(byte[] header, Listener listener) throws IOException {
    int length = payloadLength(header);
    int type = header[3] & 0xff;
    int flags = header[4] & 0xff;
    int stream = ByteBuffer.wrap(header, 5, 4).getInt() & 0x7fffffff;
    if (length > DEFAULT_MAX_FRAME) {
      goAway(FRAME_SIZE_ERROR, "a frame of " + length + " bytes; this endpoint allows " + DEFAULT_MAX_FRAME);
      throw new IOException("the peer sent a frame of " + length + " bytes, larger than the " + DEFAULT_MAX_FRAME + " allowed");
    }
    var payload = new byte[length];
    in.readFully(payload);
    check(type, flags, stream, length);
    switch (type) {
      case DATA -> {
        var body = unpadded(payload, flags);
        if (length > 0) {
          // Hand the window back at once: the message is read into memory whole (see the class).
          synchronized (sending) {
            writeWindowUpdate(0, length);
            if ((flags & FLAG_END_STREAM) == 0) {
              writeWindowUpdate(stream, length);
            }
          }
        }
        listener.data(stream, body, (flags & FLAG_END_STREAM) != 0);
      }
      case HEADERS -> {
        var block = new ByteArrayOutputStream();
        int offset = 0;
        int end = payload.length;
        if ((flags & FLAG_PADDED) != 0) {
          end -= payload[0] & 0xff;
          offset = 1;
        }
        if ((flags & FLAG_PRIORITY) != 0) {
          offset += 5;
        }
        if (offset > end) {
          throw protocolError("a HEADERS frame shorter than its padding and priority");
        }
        block.write(payload, offset, end - offset);
        var endHeaders = (flags & FLAG_END_HEADERS) != 0;
        while (!endHeaders) {
          in.readFully(header);
          int more = payloadLength(header);
          int continued = ByteBuffer.wrap(header, 5, 4).getInt() & 0x7fffffff;
          if ((header[3] & 0xff) != CONTINUATION || continued != stream || more > DEFAULT_MAX_FRAME
              || block.size() + more > MAX_HEADER_LIST) {
            throw protocolError("a header block not continued by CONTINUATION frames within " + MAX_HEADER_LIST + " bytes");
          }
          var part = new byte[more];
          in.readFully(part);
          block.write(part);
          endHeaders = (header[4] & FLAG_END_HEADERS) != 0;
        }
        listener.headers(stream, decode(block.toByteArray()), (flags & FLAG_END_STREAM) != 0);
      }
      case RST_STREAM -> {
        forget(stream);
        listener.reset(stream, ByteBuffer.wrap(payload).getInt());
      }
      case SETTINGS -> {
        if ((flags & FLAG_ACK) == 0) {
          applySettings(payload);
        }
      }
      case PING -> {
        if ((flags & FLAG_ACK) == 0) {
          synchronized (sending) {
            writeFrame(PING, FLAG_ACK, 0, payload, 0, payload.length);
          }
        }
      }
      case GOAWAY -> listener.goingAway(ByteBuffer.wrap(payload).getInt() & 0x7fffffff);
      case WINDOW_UPDATE -> {
        int increment = ByteBuffer.wrap(payload).getInt() & 0x7fffffff;
        if (increment == 0) {
          throw protocolError("a WINDOW_UPDATE of 0");
        }
        boolean overflow = false;
        synchronized (sending) {
          if (stream == 0) {
            connectionWindow += increment;
            if (connectionWindow > Integer.MAX_VALUE) {
              goAway(FLOW_CONTROL_ERROR, "a connection window above 2^31-1");
              throw new IOException("HTTP/2 flow-control error: the peer opened the connection's window above 2^31-1");
            }
          } else {
            var window = streamWindows.get(stream);
            if (window != null) {
              window[0] += increment;
              // RFC 9113 section 6.9.1: a stream error; the connection and its other streams go on.
              overflow = window[0] > Integer.MAX_VALUE;
            }
          }
          sending.notifyAll();
        }
        if (overflow) {
          reset(stream, FLOW_CONTROL_ERROR);
          listener.reset(stream, FLOW_CONTROL_ERROR);
        }
      }
      case PUSH_PROMISE -> throw protocolError("PUSH_PROMISE, which this endpoint's settings disable");
      default -> {
        // PRIORITY and unknown types: ignored, as RFC 9113 asks.
      }
    }
  }

  /**
   * A frame's shape before its payload is read for meaning (RFC 9113 section 6): the lengths fixed by
   * its type, and the stream it may or may not be on. Anything else ends the connection, with a
   * GOAWAY saying why.
   */
  private void check(int type, int flags, int stream, int length) throws IOException {
    boolean fixedLengthWrong = switch (type) {
      case RST_STREAM, WINDOW_UPDATE -> length != 4;
      case PING -> length != 8;
      case SETTINGS -> length % 6 != 0 || (flags & FLAG_ACK) != 0 && length != 0;
      case GOAWAY -> length < 8;
      default -> false;
    };
    if (fixedLengthWrong) {
      goAway(FRAME_SIZE_ERROR, "a frame of type " + type + " and " + length + " bytes");
      throw new IOException("HTTP/2 frame size error: a frame of type " + type + " and " + length + " bytes");
    }
    boolean onConnection = type == SETTINGS || type == PING || type == GOAWAY;
    boolean onStream = type == DATA || type == HEADERS || type == RST_STREAM || type == CONTINUATION;
    if (onConnection && stream != 0 || onStream && stream == 0) {
      throw protocolError("a frame of type " + type + " on stream " + stream);
    }
    if (type == CONTINUATION) {
      throw protocolError("CONTINUATION without a HEADERS frame before it");
    }
    if ((type == DATA || type == HEADERS) && (flags & FLAG_PADDED) != 0 && length == 0) {
      throw protocolError("a padded frame without its pad length");
    }
  }

  private IOException protocolError(String what) throws IOException {
    goAway(PROTOCOL_ERROR, what);
    return new IOException("HTTP/2 protocol error: " + what);
  }

  /** The 24-bit length at the start of a frame's 9-byte header. */
  private static int payloadLength(byte[] header) {
    return ((header[0] & 0xff) << 16) | ((header[1] & 0xff) << 8) | (header[2] & 0xff);
  }

  private static byte[] unpadded(byte[] payload, int flags) throws IOException {
    if ((flags & FLAG_PADDED) == 0) {
      return payload;
    }
    int pad = payload.length == 0 ? 0 : payload[0] & 0xff;
    if (payload.length == 0 || 1 + pad > payload.length) {
      throw new IOException("HTTP/2 protocol error: a DATA frame shorter than its padding");
    }
    return Arrays.copyOfRange(payload, 1, payload.length - pad);
  }

  private Map<String, String> decode(byte[] block) throws IOException {
    var headers = new LinkedHashMap<String, String>();
    boolean tooLarge;
    try {
      decoder.decode(new ByteArrayInputStream(block), (name, value, sensitive) ->
          headers.put(new String(name, StandardCharsets.ISO_8859_1), new String(value, StandardCharsets.ISO_8859_1)));
      tooLarge = decoder.endHeaderBlock();
    } catch (IOException | RuntimeException e) {
      // The decoder's table is no longer the peer's: nothing after this block can be read.
      goAway(COMPRESSION_ERROR, "a header block HPACK cannot decode");
      throw new IOException("HTTP/2 compression error: " + e.getMessage(), e);
    }
    if (tooLarge) {
      throw new IOException("a header list larger than " + MAX_HEADER_LIST + " bytes");
    }
    return headers;
  }

  private void applySettings(byte[] payload) throws IOException {
    synchronized (sending) {
      for (int i = 0; i + 6 <= payload.length; i += 6) {
        var setting = ByteBuffer.wrap(payload, i, 6);
        int id = setting.getShort() & 0xffff;
        long value = setting.getInt() & 0xffffffffL;
        if (id == SETTINGS_INITIAL_WINDOW_SIZE) {
          if (value > Integer.MAX_VALUE) {
            goAway(FLOW_CONTROL_ERROR, "an initial window above 2^31-1");
            throw new IOException("HTTP/2 flow-control error: an initial window of " + value);
          }
          long delta = value - peerInitialWindow;
          streamWindows.values().forEach(w -> w[0] += delta);
          peerInitialWindow = (int) value;
          // RFC 9113 section 6.9.2: a change that takes an open stream's window above 2^31-1.
          if (streamWindows.values().stream().anyMatch(w -> w[0] > Integer.MAX_VALUE)) {
            goAway(FLOW_CONTROL_ERROR, "an initial window that takes a stream's window above 2^31-1");
            throw new IOException("HTTP/2 flow-control error: an initial window of " + value + " takes a stream's window above 2^31-1");
          }
        } else if (id == SETTINGS_MAX_FRAME_SIZE) {
          peerMaxFrame = (int) Math.max(DEFAULT_MAX_FRAME, Math.min(value, 1 << 24));
        }
        // The peer's header table size needs nothing: our encoder never uses its table.
      }
      writeFrame(SETTINGS, FLAG_ACK, 0, new byte[0], 0, 0);
      sending.notifyAll();
    }
  }

  /** Sends a header block (in one HEADERS frame and CONTINUATIONs if it is long). */
  void sendHeaders(int stream, Map<String, String> headers, boolean endStream) throws IOException {
    var block = new ByteArrayOutputStream(128);
    for (var header : headers.entrySet()) {
      encoder.encodeHeader(block, header.getKey().getBytes(StandardCharsets.ISO_8859_1),
          header.getValue().getBytes(StandardCharsets.ISO_8859_1), false);
    }
    var bytes = block.toByteArray();
    synchronized (sending) {
      ensureOpen();
      streamWindows.computeIfAbsent(stream, s -> new long[] {peerInitialWindow});
      int first = Math.min(bytes.length, peerMaxFrame);
      int flags = (endStream ? FLAG_END_STREAM : 0) | (first == bytes.length ? FLAG_END_HEADERS : 0);
      writeFrame(HEADERS, flags, stream, bytes, 0, first);
      for (int at = first; at < bytes.length; ) {
        int part = Math.min(bytes.length - at, peerMaxFrame);
        writeFrame(CONTINUATION, at + part == bytes.length ? FLAG_END_HEADERS : 0, stream, bytes, at, part);
        at += part;
      }
      if (endStream) {
        streamWindows.remove(stream);
      }
    }
  }

  /**
   * Sends {@code data} on the stream as the peer's windows allow, waiting for them to open (not on
   * the reading thread: it is the one that would see them open).
   */
  void sendData(int stream, byte[] data, boolean endStream) throws IOException {
    synchronized (sending) {
      int at = 0;
      do {
        ensureOpen();
        var window = streamWindows.get(stream);
        if (window == null) {
          throw new IOException("stream " + stream + " is closed");
        }
        long allowed = Math.min(Math.min(window[0], connectionWindow), peerMaxFrame);
        if (allowed <= 0 && at < data.length) {
          long waitUntil = System.nanoTime() + SEND_WINDOW_WAIT_MILLIS * 1_000_000;
          while (Math.min(window[0], connectionWindow) <= 0 && !closed && streamWindows.get(stream) == window) {
            long left = (waitUntil - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
              throw new IOException("the peer's flow-control window stayed closed for " + SEND_WINDOW_WAIT_MILLIS + " ms");
            }
            try {
              sending.wait(left);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IOException("interrupted while waiting for the peer's window", e);
            }
          }
          continue;
        }
        int part = (int) Math.max(0, Math.min(allowed, data.length - at));
        boolean last = at + part == data.length;
        writeFrame(DATA, last && endStream ? FLAG_END_STREAM : 0, stream, data, at, part);
        window[0] -= part;
        connectionWindow -= part;
        at += part;
        if (last) {
          break;
        }
      } while (true);
      if (endStream) {
        streamWindows.remove(stream);
      }
    }
  }

  /** Ends a stream on our side with an error code (the peer's call is cancelled). */
  void reset(int stream, int errorCode) throws IOException {
    synchronized (sending) {
      forget(stream);
      writeFrame(RST_STREAM, 0, stream, ByteBuffer.allocate(4).putInt(errorCode).array(), 0, 4);
    }
  }

  /** A stream the peer opened: our window on it starts at the peer's initial window. */
  void opened(int stream) {
    synchronized (sending) {
      streamWindows.putIfAbsent(stream, new long[] {peerInitialWindow});
    }
  }

  void forget(int stream) {
    synchronized (sending) {
      streamWindows.remove(stream);
      sending.notifyAll();
    }
  }

  void goAway(int errorCode, String debug) {
    goAway(0, errorCode, debug);
  }

  /** Says the connection ends: the peer's streams above {@code lastStream} were not taken and may be sent again elsewhere. */
  void goAway(int lastStream, int errorCode, String debug) {
    synchronized (sending) {
      try {
        var text = debug.getBytes(StandardCharsets.UTF_8);
        var payload = ByteBuffer.allocate(8 + text.length).putInt(lastStream).putInt(errorCode).put(text).array();
        writeFrame(GOAWAY, 0, 0, payload, 0, payload.length);
      } catch (IOException ignored) {
        // the connection ends anyway
      }
    }
  }

  private void writeWindowUpdate(int stream, int increment) throws IOException {
    writeFrame(WINDOW_UPDATE, 0, stream, ByteBuffer.allocate(4).putInt(increment).array(), 0, 4);
  }

  private void ensureOpen() throws IOException {
    if (closed) {
      throw new IOException("the connection is closed");
    }
  }

  // Called holding `sending`: one frame's header and payload go out together.
  private void writeFrame(int type, int flags, int stream, byte[] payload, int offset, int length) throws IOException {
    var frame = new byte[9 + length];
    frame[0] = (byte) (length >>> 16);
    frame[1] = (byte) (length >>> 8);
    frame[2] = (byte) length;
    frame[3] = (byte) type;
    frame[4] = (byte) flags;
    ByteBuffer.wrap(frame, 5, 4).putInt(stream & 0x7fffffff);
    System.arraycopy(payload, offset, frame, 9, length);
    write(ByteBuffer.wrap(frame));
  }

  private void write(ByteBuffer bytes) throws IOException {
    writingSince = System.nanoTime() | 1;
    try {
      while (bytes.hasRemaining()) {
        channel.write(bytes);
      }
    } finally {
      writingSince = 0;
    }
  }

  /**
   * How long the write under way has waited, 0 if none is: a frame is written at once unless the
   * socket's buffers are full, so this grows only while the peer does not read.
   */
  long stalledWriteNanos() {
    long since = writingSince;
    return since == 0 ? 0 : System.nanoTime() - since;
  }

  @Override
  public void close() {
    closed = true;
    try {
      // First: a sender blocked in a write holds the lock, and a close is what releases it.
      channel.close();
    } catch (IOException ignored) {
      // closing is all we wanted
    }
    synchronized (sending) {
      sending.notifyAll();
    }
  }
}
