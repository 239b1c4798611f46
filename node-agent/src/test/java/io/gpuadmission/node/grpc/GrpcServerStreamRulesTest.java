package io.gpuadmission.node.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.gpuadmission.node.grpc.RawHttp2Client.Frame;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's side of HTTP/2's stream rules (RFC 9113 sections 5.1, 6.5.2, 6.9), driven with raw
 * frames: what a client that breaks them gets, and that the connection or the server serves on
 * where the RFC says so.
 */
class GrpcServerStreamRulesTest {
  private static final String WATCH = "/v1beta1.DevicePlugin/ListAndWatch";
  private static final String OPTIONS = "/v1beta1.DevicePlugin/GetDevicePluginOptions";
  private static final String HOLD = "/test.Calls/Hold";
  private static final Duration WITHIN = Duration.ofSeconds(10);
  private static final int STREAM_CLOSED = 0x5;
  private static final int REFUSED_STREAM = 0x7;
  private static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;

  @TempDir Path dir;
  private GrpcServer server;
  private final List<GrpcServer.Stream> watches = new CopyOnWriteArrayList<>();
  private final AtomicInteger cancels = new AtomicInteger();
  private final AtomicInteger optionsRuns = new AtomicInteger();
  private final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
  private final java.util.concurrent.atomic.AtomicBoolean holding = new java.util.concurrent.atomic.AtomicBoolean();
  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void serve() throws Exception {
    server = GrpcServer.start(dir.resolve("plugin.sock"), "rules-test", Map.of(OPTIONS, request -> {
          optionsRuns.incrementAndGet();
          return "options".getBytes();
        }, HOLD, request -> {
          holding.set(true);
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return new byte[0];
        }),
        Map.of(WATCH, (request, stream) -> {
          stream.onCancel(cancels::incrementAndGet);
          watches.add(stream);
          stream.send("devices".getBytes());
        }));
  }

  @AfterEach
  void close() throws Exception {
    release.countDown();
    for (var c : closing.reversed()) {
      c.close();
    }
    server.close();
  }

  private RawHttp2Client client() throws Exception {
    var client = RawHttp2Client.start(dir.resolve("plugin.sock"));
    closing.add(client);
    return client;
  }

  /** Opens ListAndWatch on {@code stream} and reads up to its first message. */
  private static void watch(RawHttp2Client client, int stream) throws Exception {
    client.headers(stream, WATCH, false);
    client.message(stream, new byte[0], true);
    client.until(f -> f.type() == Http2Connection.DATA && f.stream() == stream, WITHIN, new ArrayList<>());
  }

  private static boolean isReset(Frame f, int stream, int code) {
    return f.type() == Http2Connection.RST_STREAM && f.stream() == stream && f.errorCode() == code;
  }

  @Test
  void aStreamWindowOpenedAbove2To31Minus1ResetsThatStreamAndTheConnectionServesOn() throws Exception {
    var client = client();
    watch(client, 1);

    // 65,535 + 2^31-1: above the largest window RFC 9113 section 6.9.1 allows.
    client.windowUpdate(1, Integer.MAX_VALUE);
    var frames = client.sync(WITHIN);

    assertThat(frames).as("frames before the PING's ACK").anyMatch(f -> isReset(f, 1, Http2Connection.FLOW_CONTROL_ERROR))
        .noneMatch(f -> f.type() == Http2Connection.GOAWAY);
    await().atMost(WITHIN).until(() -> cancels.get() == 1);
    assertThat(watches.getFirst().send("more".getBytes())).isFalse();
    client.headers(3, OPTIONS, false);
    client.message(3, new byte[0], true);
    var answer = client.until(f -> f.type() == Http2Connection.DATA && f.stream() == 3, WITHIN, new ArrayList<>());
    assertThat(new String(answer.payload(), 5, answer.payload().length - 5)).isEqualTo("options");
  }

  @Test
  void anInitialWindowThatWouldTakeAnOpenStreamAbove2To31Minus1EndsTheConnection() throws Exception {
    var client = client();
    watch(client, 1);
    // The server sent 12 bytes of the 65,535: opening by 2^31-1 - 65,523 leaves the stream's window at exactly 2^31-1 (allowed).
    client.windowUpdate(1, Integer.MAX_VALUE - 65_535 + 12);
    assertThat(client.sync(WITHIN)).noneMatch(f -> f.type() == Http2Connection.RST_STREAM || f.type() == Http2Connection.GOAWAY);

    // RFC 9113 section 6.9.2: a SETTINGS_INITIAL_WINDOW_SIZE change that takes a window above 2^31-1 is a connection error.
    client.setting(Http2Connection.SETTINGS_INITIAL_WINDOW_SIZE, 65_536);
    var seen = new ArrayList<Frame>();
    var goAway = client.until(f -> f.type() == Http2Connection.GOAWAY, WITHIN, seen);

    assertThat(goAway.errorCode()).isEqualTo(Http2Connection.FLOW_CONTROL_ERROR);
    assertThat(client.closedWithin(WITHIN)).isTrue();
    await().atMost(WITHIN).until(() -> cancels.get() == 1);
  }

  @Test
  void anInitialWindowLoweredMidStreamHoldsItsSendsUntilRaisedAgain() throws Exception {
    var client = client();
    watch(client, 1);
    // 65,535 - 12 sent: a window of 0 leaves the stream at -12.
    client.setting(Http2Connection.SETTINGS_INITIAL_WINDOW_SIZE, 0);
    client.sync(WITHIN);
    var sender = Thread.ofVirtual().start(() -> watches.getFirst().send("held".getBytes()));

    assertThat(client.sync(Duration.ofMillis(500))).noneMatch(f -> f.type() == Http2Connection.DATA);
    client.setting(Http2Connection.SETTINGS_INITIAL_WINDOW_SIZE, 65_535);
    var data = client.until(f -> f.type() == Http2Connection.DATA, WITHIN, new ArrayList<>());
    assertThat(new String(data.payload(), 5, data.payload().length - 5)).isEqualTo("held");
    sender.join(WITHIN);
  }

  @Test
  void framesAfterTheRequestEndedResetTheCallInsteadOfRunningItAgain() throws Exception {
    var client = client();
    watch(client, 1);

    // Trailers on a stream the client already half-closed (RFC 9113 section 5.1: STREAM_CLOSED).
    client.headers(1, WATCH, true);
    var frames = client.sync(WITHIN);

    assertThat(frames).anyMatch(f -> isReset(f, 1, STREAM_CLOSED));
    assertThat(watches).hasSize(1);
    await().atMost(WITHIN).until(() -> cancels.get() == 1);

    watch(client, 3);
    client.message(3, new byte[0], true);
    assertThat(client.sync(WITHIN)).anyMatch(f -> isReset(f, 3, STREAM_CLOSED));
    assertThat(watches).hasSize(2);
  }

  @Test
  void streamsBeyondTheAdvertisedMaximumAreRefused() throws Exception {
    var client = client();
    var seen = new ArrayList<Frame>();
    var settings = client.until(f -> f.type() == Http2Connection.SETTINGS && (f.flags() & Http2Connection.FLAG_ACK) == 0, WITHIN, seen);
    int advertised = -1;
    for (var at = ByteBuffer.wrap(settings.payload()); at.hasRemaining(); ) {
      int id = at.getShort();
      int value = at.getInt();
      if (id == SETTINGS_MAX_CONCURRENT_STREAMS) {
        advertised = value;
      }
    }
    assertThat(advertised).isEqualTo(GrpcServer.MAX_STREAMS);

    // Requests that never end: each call stays open, holding what it was sent.
    for (int i = 0; i < advertised; i++) {
      client.headers(1 + 2 * i, WATCH, false);
    }
    assertThat(client.sync(WITHIN)).noneMatch(f -> f.type() == Http2Connection.RST_STREAM);
    int oneTooMany = 1 + 2 * advertised;
    client.headers(oneTooMany, WATCH, false);
    assertThat(client.sync(WITHIN)).anyMatch(f -> isReset(f, oneTooMany, REFUSED_STREAM));

    // One ends: room for the next.
    client.message(1, new byte[0], true);
    client.until(f -> f.type() == Http2Connection.DATA && f.stream() == 1, WITHIN, new ArrayList<>());
    client.frame(Http2Connection.RST_STREAM, 0, 1, ByteBuffer.allocate(4).putInt(0x8).array());
    await().atMost(WITHIN).until(() -> cancels.get() == 1);
    client.headers(oneTooMany + 2, WATCH, false);
    client.message(oneTooMany + 2, new byte[0], true);
    client.until(f -> f.type() == Http2Connection.DATA && f.stream() == oneTooMany + 2, WITHIN, new ArrayList<>());
  }

  @Test
  void theRequestBytesOneConnectionHoldsAreBounded() throws Exception {
    var client = client();
    var chunk = new byte[16_000];
    // Stream 1 holds 3 MiB of a request that has not ended; stream 3 then asks for 2 MiB more.
    client.headers(1, OPTIONS, false);
    client.headers(3, OPTIONS, false);
    for (int sent = 0; sent < 3 << 20; sent += chunk.length) {
      client.frame(Http2Connection.DATA, 0, 1, chunk);
    }
    assertThat(client.sync(WITHIN)).noneMatch(f -> f.type() == Http2Connection.HEADERS);
    for (int sent = 0; sent < 2 << 20; sent += chunk.length) {
      client.frame(Http2Connection.DATA, 0, 3, chunk);
    }
    var frames = client.sync(WITHIN);

    var trailers = frames.stream().filter(f -> f.type() == Http2Connection.HEADERS).toList();
    assertThat(trailers).extracting(Frame::stream).containsExactly(3);
    var decoded = new java.util.LinkedHashMap<String, String>();
    new com.twitter.hpack.Decoder(16_384, 4096).decode(new java.io.ByteArrayInputStream(trailers.getFirst().payload()),
        (name, value, sensitive) -> decoded.put(new String(name), new String(value)));
    assertThat(decoded).containsEntry("grpc-status", "8")
        .containsEntry("grpc-message", "requests of more than " + GrpcServer.MAX_REQUEST + " bytes in all on one connection");
  }

  @Test
  void callsResetBeforeTheyRunAreNotRunAndCannotQueueWithoutBound() throws Exception {
    var client = client();
    // The connection's calls thread busy with one call; then calls opened and reset at once.
    client.headers(1, HOLD, false);
    client.message(1, new byte[0], true);
    await().atMost(WITHIN).until(holding::get);
    int resets = 3 * GrpcServer.MAX_STREAMS;
    for (int i = 0; i < resets; i++) {
      int stream = 3 + 2 * i;
      client.headers(stream, OPTIONS, false);
      client.message(stream, new byte[0], true);
      client.frame(Http2Connection.RST_STREAM, 0, stream, ByteBuffer.allocate(4).putInt(0x8).array());
    }
    var frames = client.sync(WITHIN);

    // The first MAX_STREAMS queue behind the held call; those after are refused, not queued.
    assertThat(frames.stream().filter(f -> isReset(f, f.stream(), REFUSED_STREAM)).map(Frame::stream))
        .containsExactlyElementsOf(java.util.stream.IntStream.range(GrpcServer.MAX_STREAMS, resets).mapToObj(i -> 3 + 2 * i).toList());
    release.countDown();
    // Once the calls thread has gone through its queue (each reset call skipped), a call is taken again.
    var next = new AtomicInteger(3 + 2 * resets);
    await().atMost(WITHIN).until(() -> {
      int stream = next.getAndAdd(2);
      client.headers(stream, OPTIONS, false);
      client.message(stream, new byte[0], true);
      var answer = client.until(f -> f.stream() == stream && (f.type() == Http2Connection.DATA || f.type() == Http2Connection.RST_STREAM),
          WITHIN, new ArrayList<>());
      return answer.type() == Http2Connection.DATA;
    });
    assertThat(optionsRuns.get()).as("calls run (the reset ones were not)").isEqualTo(1);
  }
}
