package io.gpuadmission.node.grpc;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A client that writes HTTP/2 frames by hand, to send what no well-behaved client library would,
 * and reads what the server answers frame by frame on a thread of its own (so a server that says
 * nothing fails the test at a timeout instead of hanging it).
 */
final class RawHttp2Client implements AutoCloseable {
  /** A frame the server sent; {@code END} (type -1) once the server closed the connection. */
  record Frame(int type, int flags, int stream, byte[] payload) {
    static final Frame END = new Frame(-1, 0, 0, new byte[0]);

    int errorCode() {
      return ByteBuffer.wrap(payload, type == Http2Connection.GOAWAY ? 4 : 0, 4).getInt();
    }

    @Override
    public String toString() {
      return "Frame[type=" + type + ", flags=" + flags + ", stream=" + stream + ", " + payload.length + " bytes]";
    }
  }

  private final SocketChannel channel;
  private final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();

  private RawHttp2Client(SocketChannel channel, boolean reading) {
    this.channel = channel;
    if (reading) {
      var reader = new Thread(this::read, "raw-http2-reader");
      reader.setDaemon(true);
      reader.start();
    }
  }

  /** Connects and sends nothing. */
  static RawHttp2Client connect(Path socket) throws IOException {
    return connect(socket, true);
  }

  private static RawHttp2Client connect(Path socket, boolean reading) throws IOException {
    var channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    channel.connect(UnixDomainSocketAddress.of(socket));
    return new RawHttp2Client(channel, reading);
  }

  /** Connects and sends the client preface and an empty SETTINGS. */
  static RawHttp2Client start(Path socket) throws IOException {
    return start(socket, true);
  }

  /** As {@link #start(Path)}, and never reads what the server sends. */
  static RawHttp2Client startWithoutReading(Path socket) throws IOException {
    return start(socket, false);
  }

  private static RawHttp2Client start(Path socket, boolean reading) throws IOException {
    var client = connect(socket, reading);
    client.write(Http2Connection.PREFACE);
    client.frame(Http2Connection.SETTINGS, 0, 0, new byte[0]);
    return client;
  }

  private void read() {
    try {
      var in = Channels.newInputStream(channel);
      var header = new byte[9];
      while (in.readNBytes(header, 0, 9) == 9) {
        int length = ((header[0] & 0xff) << 16) | ((header[1] & 0xff) << 8) | (header[2] & 0xff);
        var payload = in.readNBytes(length);
        frames.add(new Frame(header[3] & 0xff, header[4] & 0xff, ByteBuffer.wrap(header, 5, 4).getInt() & 0x7fffffff, payload));
      }
    } catch (IOException e) {
      // closed: END says so
    }
    frames.add(Frame.END);
  }

  void write(byte[] bytes) throws IOException {
    var buffer = ByteBuffer.wrap(bytes);
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  void frame(int type, int flags, int stream, byte[] payload) throws IOException {
    var frame = ByteBuffer.allocate(9 + payload.length).put((byte) (payload.length >>> 16)).put((byte) (payload.length >>> 8))
        .put((byte) payload.length).put((byte) type).put((byte) flags).putInt(stream).put(payload);
    write(frame.array());
  }

  /** A request's HEADERS for {@code path} (HPACK, literal without indexing). */
  void headers(int stream, String path, boolean endStream) throws IOException {
    var block = new ByteArrayOutputStream();
    new com.twitter.hpack.Encoder(0).encodeHeader(block, ":path".getBytes(StandardCharsets.US_ASCII),
        path.getBytes(StandardCharsets.US_ASCII), false);
    frame(Http2Connection.HEADERS, Http2Connection.FLAG_END_HEADERS | (endStream ? Http2Connection.FLAG_END_STREAM : 0), stream,
        block.toByteArray());
  }

  /** One gRPC message (length-prefixed) in one DATA frame. */
  void message(int stream, byte[] message, boolean endStream) throws IOException {
    frame(Http2Connection.DATA, endStream ? Http2Connection.FLAG_END_STREAM : 0, stream, GrpcWire.frame(message));
  }

  void windowUpdate(int stream, int increment) throws IOException {
    frame(Http2Connection.WINDOW_UPDATE, 0, stream, ByteBuffer.allocate(4).putInt(increment).array());
  }

  void setting(int id, int value) throws IOException {
    frame(Http2Connection.SETTINGS, 0, 0, ByteBuffer.allocate(6).putShort((short) id).putInt(value).array());
  }

  void ping(long data) throws IOException {
    frame(Http2Connection.PING, 0, 0, ByteBuffer.allocate(8).putLong(data).array());
  }

  /** The next frame the server sent, or null if none came within {@code within}. */
  Frame next(Duration within) throws InterruptedException {
    var frame = frames.poll(within.toMillis(), TimeUnit.MILLISECONDS);
    if (frame == Frame.END) {
      frames.add(Frame.END);
    }
    return frame;
  }

  /**
   * Reads frames until one matches, and returns it; fails if the connection ends or nothing
   * matches within {@code within}. {@code seen} gets every frame read (the match too).
   */
  Frame until(Predicate<Frame> wanted, Duration within, java.util.List<Frame> seen) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      var frame = next(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
      if (frame == null) {
        throw new AssertionError("no such frame within " + within + "; seen " + seen);
      }
      seen.add(frame);
      if (wanted.test(frame)) {
        return frame;
      }
      if (frame == Frame.END) {
        throw new AssertionError("the server closed the connection; seen " + seen);
      }
    }
  }

  /** Sends a PING and returns every frame the server sent before its ACK (it answers in order). */
  java.util.List<Frame> sync(Duration within) throws IOException, InterruptedException {
    long marker = System.nanoTime();
    ping(marker);
    var seen = new java.util.ArrayList<Frame>();
    until(f -> f.type() == Http2Connection.PING && (f.flags() & Http2Connection.FLAG_ACK) != 0
        && ByteBuffer.wrap(f.payload()).getLong() == marker, within, seen);
    seen.removeLast();
    return seen;
  }

  /** True once the server has closed the connection, waiting up to {@code within}. */
  boolean closedWithin(Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      var frame = next(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
      if (frame == Frame.END) {
        return true;
      }
      if (frame == null) {
        return false;
      }
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
