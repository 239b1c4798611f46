package io.gpuadmission.node.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.gpuadmission.node.deviceplugin.v1beta1.DevicePluginGrpc;
import io.gpuadmission.node.deviceplugin.v1beta1.Empty;
import io.gpuadmission.node.deviceplugin.v1beta1.ListAndWatchResponse;
import io.gpuadmission.node.grpc.RawHttp2Client.Frame;
import io.gpuadmission.testing.LogCapture;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a connection may cost the server: the preface deadline, the cap on connections, and the
 * close of a connection idle with no stream, short limits set here so that each shows in a second;
 * and that none of them touches a ListAndWatch that stays open with nothing to say, as the
 * kubelet's does for days.
 */
class GrpcServerConnectionLimitsTest {
  private static final String WATCH = "/v1beta1.DevicePlugin/ListAndWatch";
  private static final String OPTIONS = "/v1beta1.DevicePlugin/GetDevicePluginOptions";
  private static final Duration WITHIN = Duration.ofSeconds(10);

  @TempDir Path dir;
  private final List<GrpcServer.Stream> watches = new CopyOnWriteArrayList<>();
  private final java.util.concurrent.atomic.AtomicInteger cancels = new java.util.concurrent.atomic.AtomicInteger();
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final EpollEventLoopGroup loop = new EpollEventLoopGroup(1);

  @AfterEach
  void close() throws Exception {
    for (var c : closing.reversed()) {
      c.close();
    }
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  private Path serve(GrpcServer.Limits limits) throws Exception {
    var socket = dir.resolve("plugin.sock");
    var server = GrpcServer.start(socket, "limits-test", limits, Map.of(OPTIONS, request -> "options".getBytes()),
        Map.of(WATCH, (request, stream) -> {
          stream.onCancel(cancels::incrementAndGet);
          watches.add(stream);
          stream.send(ListAndWatchResponse.getDefaultInstance().toByteArray());
        }));
    closing.add(server);
    return socket;
  }

  private RawHttp2Client raw(RawHttp2Client client) {
    closing.add(client);
    return client;
  }

  private static boolean isServerSettings(Frame f) {
    return f != null && f.type() == Http2Connection.SETTINGS && (f.flags() & Http2Connection.FLAG_ACK) == 0;
  }

  @Test
  void aConnectionThatDoesNotStartHttp2InTimeIsClosed() throws Exception {
    var socket = serve(new GrpcServer.Limits(8, Duration.ofMillis(300), Duration.ofMinutes(5), Duration.ofSeconds(30)));

    var silent = raw(RawHttp2Client.connect(socket));
    var prefaceOnly = raw(RawHttp2Client.connect(socket));
    prefaceOnly.write(Http2Connection.PREFACE);
    var started = raw(RawHttp2Client.start(socket));

    assertThat(silent.closedWithin(WITHIN)).isTrue();
    assertThat(prefaceOnly.closedWithin(WITHIN)).as("a preface without the SETTINGS that must follow it").isTrue();
    assertThat(started.closedWithin(Duration.ofSeconds(1))).as("a connection that started in time, a second later").isFalse();
    assertThat(started.sync(WITHIN)).noneMatch(f -> f.type() == Http2Connection.GOAWAY);
  }

  @Test
  void aFirstFrameOtherThanSettingsIsAProtocolError() throws Exception {
    var socket = serve(GrpcServer.Limits.DEFAULT);
    var client = raw(RawHttp2Client.connect(socket));
    client.write(Http2Connection.PREFACE);
    client.ping(1);

    var goAway = client.until(f -> f.type() == Http2Connection.GOAWAY, WITHIN, new ArrayList<>());
    assertThat(goAway.errorCode()).isEqualTo(Http2Connection.PROTOCOL_ERROR);
    assertThat(client.closedWithin(WITHIN)).isTrue();
  }

  @Test
  void connectionsBeyondTheCapAreRefusedUntilOneCloses() throws Exception {
    var socket = serve(new GrpcServer.Limits(2, Duration.ofSeconds(10), Duration.ofMinutes(5), Duration.ofSeconds(30)));
    var first = raw(RawHttp2Client.start(socket));
    var second = raw(RawHttp2Client.start(socket));
    assertThat(first.next(WITHIN)).matches(GrpcServerConnectionLimitsTest::isServerSettings);
    assertThat(second.next(WITHIN)).matches(GrpcServerConnectionLimitsTest::isServerSettings);

    var log = LogCapture.of(GrpcServer.class, true);
    closing.add(log);
    // Connecting succeeds (the kernel completes it), then the server closes it at once.
    for (int i = 0; i < 3; i++) {
      var refused = raw(RawHttp2Client.connect(socket));
      assertThat(refused.next(WITHIN)).as("a refused connection's first frame").isEqualTo(Frame.END);
    }
    assertThat(first.sync(WITHIN)).as("the first, still served").noneMatch(f -> f.type() == Http2Connection.GOAWAY);

    first.close();
    await().atMost(WITHIN).until(() -> {
      try (var next = RawHttp2Client.start(socket)) {
        return isServerSettings(next.next(WITHIN));
      } catch (java.io.IOException refused) {
        // closed before our preface was written: still refused
        return false;
      }
    });
    assertThat(log.records()).as("one WARN for the run of refusals, one INFO when serving again").map(LogCapture::text)
        .hasSize(2)
        .first().isEqualTo("limits-test: 2 connections open, the most this socket serves: refusing more until one closes "
            + "(a connection that does not start HTTP/2 within 10 s is closed; one with no call open for 300 s too)");
    assertThat(LogCapture.text(log.records().get(1))).startsWith("limits-test: serving connections again, after refusing ");
  }

  @Test
  void aConnectionWithNoStreamIsClosedOnceIdleForTheLimit() throws Exception {
    var socket = serve(new GrpcServer.Limits(8, Duration.ofSeconds(10), Duration.ofMillis(300), Duration.ofSeconds(30)));
    var client = raw(RawHttp2Client.start(socket));
    client.headers(1, OPTIONS, false);
    client.message(1, new byte[0], true);
    var seen = new ArrayList<Frame>();
    client.until(f -> f.type() == Http2Connection.HEADERS && (f.flags() & Http2Connection.FLAG_END_STREAM) != 0, WITHIN, seen);

    var goAway = client.until(f -> f.type() == Http2Connection.GOAWAY, WITHIN, seen);

    assertThat(goAway.errorCode()).isEqualTo(Http2Connection.NO_ERROR);
    assertThat(java.nio.ByteBuffer.wrap(goAway.payload()).getInt()).as("the last stream it took").isEqualTo(1);
    // Stream 3 comes after the GOAWAY: not taken (the client may send it again on a new connection).
    client.headers(3, OPTIONS, false);
    client.message(3, new byte[0], true);
    var after = new ArrayList<Frame>();
    client.until(f -> f == Frame.END, WITHIN, after);
    assertThat(after).as("frames after the GOAWAY, until the server closed").noneMatch(f -> f.stream() == 3).endsWith(Frame.END);
  }

  @Test
  void aListAndWatchIdleLongerThanTheIdleLimitStaysOpenAndGetsItsNextUpdate() throws Exception {
    var socket = serve(new GrpcServer.Limits(8, Duration.ofSeconds(10), Duration.ofMillis(300), Duration.ofSeconds(30)));
    ManagedChannel channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString())).eventLoopGroup(loop)
        .channelType(EpollDomainSocketChannel.class).usePlaintext().overrideAuthority("localhost").build();
    closing.add(channel::shutdownNow);
    var received = new CopyOnWriteArrayList<ListAndWatchResponse>();
    var ended = new CopyOnWriteArrayList<String>();
    DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), new StreamObserver<>() {
      @Override
      public void onNext(ListAndWatchResponse value) {
        received.add(value);
      }

      @Override
      public void onError(Throwable t) {
        ended.add(t.toString());
      }

      @Override
      public void onCompleted() {
        ended.add("completed");
      }
    });
    await().atMost(WITHIN).until(() -> received.size() == 1);
    // A connection without a stream on this server is closed meanwhile: the idle check runs.
    var idle = raw(RawHttp2Client.start(socket));
    assertThat(idle.until(f -> f.type() == Http2Connection.GOAWAY, WITHIN, new ArrayList<>()).errorCode()).isEqualTo(Http2Connection.NO_ERROR);

    // Six times the idle limit with nothing on the stream, as a kubelet's watch with no device change.
    Thread.sleep(1800);
    var update = ListAndWatchResponse.newBuilder().addDevices(io.gpuadmission.node.deviceplugin.v1beta1.Device.newBuilder()
        .setID("GPU-0").setHealth("Unhealthy")).build();
    assertThat(watches.getFirst().send(update.toByteArray())).isTrue();

    await().atMost(WITHIN).until(() -> received.size() == 2);
    assertThat(received.get(1)).isEqualTo(update);
    assertThat(ended).isEmpty();
  }

  @Test
  void aConnectionWhoseClientStopsReadingIsClosedOnceAWriteMakesNoProgressForTheLimit() throws Exception {
    var socket = serve(new GrpcServer.Limits(8, Duration.ofSeconds(10), Duration.ofMinutes(5), Duration.ofMillis(500)));
    // Windows as large as HTTP/2 allows: only the socket's buffers, full, hold the server's writes.
    var client = raw(RawHttp2Client.startWithoutReading(socket));
    client.setting(Http2Connection.SETTINGS_INITIAL_WINDOW_SIZE, Integer.MAX_VALUE);
    client.windowUpdate(0, Integer.MAX_VALUE - 65_535);
    client.headers(1, WATCH, false);
    client.message(1, new byte[0], true);
    await().atMost(WITHIN).until(() -> watches.size() == 1);

    var chunk = new byte[64 << 10];
    var sent = new java.util.concurrent.atomic.AtomicInteger();
    var sender = Thread.ofVirtual().start(() -> {
      while (sent.get() < 1000 && watches.getFirst().send(chunk)) {
        sent.incrementAndGet();
      }
    });

    await().atMost(WITHIN).until(() -> !sender.isAlive());
    assertThat(sent.get()).as("64 KiB messages sent before the buffers filled").isLessThan(1000);
    assertThat(cancels.get()).isEqualTo(1);
    // The cap's place is free again.
    try (var next = RawHttp2Client.start(socket)) {
      assertThat(next.next(WITHIN)).matches(GrpcServerConnectionLimitsTest::isServerSettings);
    }
  }
}
