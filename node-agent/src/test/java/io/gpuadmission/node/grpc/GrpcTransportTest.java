package io.gpuadmission.node.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.gpuadmission.node.deviceplugin.v1beta1.ContainerPreferredAllocationRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.ContainerPreferredAllocationResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.Device;
import io.gpuadmission.node.deviceplugin.v1beta1.DevicePluginGrpc;
import io.gpuadmission.node.deviceplugin.v1beta1.Empty;
import io.gpuadmission.node.deviceplugin.v1beta1.ListAndWatchResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.PreferredAllocationRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.PreferredAllocationResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.PreStartContainerRequest;
import io.gpuadmission.node.podresources.v1.ContainerResources;
import io.gpuadmission.node.podresources.v1.ContainerDevices;
import io.gpuadmission.node.podresources.v1.ListPodResourcesRequest;
import io.gpuadmission.node.podresources.v1.ListPodResourcesResponse;
import io.gpuadmission.node.podresources.v1.PodResources;
import io.gpuadmission.node.podresources.v1.PodResourcesListerGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's own gRPC against grpc-java on Netty, an independent implementation of the same
 * protocol (as the kubelet's grpc-go is): our server called by grpc-java's client, our client
 * calling grpc-java's server, over Unix sockets, including what only large or many messages
 * exercise (frames split at 16 KiB, flow-control windows used up and opened again).
 */
class GrpcTransportTest {
  private static final String PLUGIN = "/v1beta1.DevicePlugin/";
  private static final Duration WITHIN = Duration.ofSeconds(10);

  @TempDir
  Path dir;

  private final EpollEventLoopGroup loop = new EpollEventLoopGroup(1);
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (var c : closing.reversed()) {
      c.close();
    }
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  private DevicePluginGrpc.DevicePluginBlockingStub grpcJavaClientOf(Path socket) {
    ManagedChannel channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString())).eventLoopGroup(loop)
        .channelType(EpollDomainSocketChannel.class).usePlaintext().overrideAuthority("localhost").build();
    closing.add(channel::shutdownNow);
    return DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(WITHIN.toMillis(), TimeUnit.MILLISECONDS);
  }

  private GrpcServer serve(Map<String, GrpcServer.Unary> unary, Map<String, GrpcServer.ServerStreaming> streaming) throws Exception {
    var server = GrpcServer.start(dir.resolve("plugin.sock"), "test-plugin", unary, streaming);
    closing.add(server);
    return server;
  }

  @Test
  void aUnaryCallLargerThanOneFrameIsAnsweredExactly() throws Exception {
    // 2,000 device IDs: a request and an answer of ~90 KB, six frames each and more than the
    // 64 KiB initial window of either side.
    var ids = IntStream.range(0, 2000).mapToObj(i -> "GPU-" + "%08d".formatted(i) + "-aaaa-bbbb-cccc-dddddddddddd").toList();
    serve(Map.of(PLUGIN + "GetPreferredAllocation", request -> {
      var asked = PreferredAllocationRequest.parseFrom(request).getContainerRequests(0);
      return PreferredAllocationResponse.newBuilder().addContainerResponses(ContainerPreferredAllocationResponse.newBuilder()
          .addAllDeviceIDs(asked.getAvailableDeviceIDsList().reversed())).build().toByteArray();
    }), Map.of());

    var answer = grpcJavaClientOf(dir.resolve("plugin.sock")).getPreferredAllocation(PreferredAllocationRequest.newBuilder()
        .addContainerRequests(ContainerPreferredAllocationRequest.newBuilder().addAllAvailableDeviceIDs(ids).setAllocationSize(2)).build());

    assertThat(answer.getContainerResponses(0).getDeviceIDsList()).isEqualTo(ids.reversed());
  }

  @Test
  void aMethodsErrorReachesTheClientWithItsCodeAndDescription() throws Exception {
    serve(Map.of(PLUGIN + "Allocate", request -> {
      throw new GrpcException(GrpcException.INVALID_ARGUMENT, "unknown device GPU-ünknown 100% of aliyun.com/gpu");
    }), Map.of());
    var client = grpcJavaClientOf(dir.resolve("plugin.sock"));

    assertThatThrownBy(() -> client.allocate(io.gpuadmission.node.deviceplugin.v1beta1.AllocateRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo("unknown device GPU-ünknown 100% of aliyun.com/gpu");
        });
    assertThatThrownBy(() -> client.preStartContainer(PreStartContainerRequest.getDefaultInstance()))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED);
          assertThat(e.getStatus().getDescription()).isEqualTo("unknown method /v1beta1.DevicePlugin/PreStartContainer");
        });
  }

  @Test
  void aStreamSendsMoreThanTheWindowsInOrderAndSeesTheClientCancel() throws Exception {
    var streams = new CopyOnWriteArrayList<GrpcServer.Stream>();
    var cancelled = new CountDownLatch(1);
    serve(Map.of(), Map.of(PLUGIN + "ListAndWatch", (request, stream) -> {
      stream.onCancel(cancelled::countDown);
      streams.add(stream);
    }));
    ManagedChannel channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(dir.resolve("plugin.sock").toString()))
        .eventLoopGroup(loop).channelType(EpollDomainSocketChannel.class).usePlaintext().overrideAuthority("localhost").build();
    closing.add(channel::shutdownNow);
    var received = new CopyOnWriteArrayList<String>();
    var client = io.grpc.Context.current().withCancellation();
    client.run(() -> DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), new StreamObserver<>() {
      @Override
      public void onNext(ListAndWatchResponse value) {
        received.add(value.getDevices(0).getID() + "/" + value.getDevicesCount());
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    }));
    await().atMost(WITHIN).until(() -> streams.size() == 1);

    // 300 lists of 40 devices (~2.6 KB each): ~780 KB, twelve times the stream's initial window.
    var sent = new ArrayList<String>();
    for (int i = 0; i < 300; i++) {
      var list = ListAndWatchResponse.newBuilder();
      for (int d = 0; d < 40; d++) {
        list.addDevices(Device.newBuilder().setID("GPU-" + i + "-" + d + "-0000-1111-2222-333333333333").setHealth("Healthy"));
      }
      assertThat(streams.getFirst().send(list.build().toByteArray())).isTrue();
      sent.add("GPU-" + i + "-0-0000-1111-2222-333333333333/40");
    }
    await().atMost(WITHIN).until(() -> received.size() == 300);
    assertThat(received).isEqualTo(sent);

    client.cancel(null);
    assertThat(cancelled.await(WITHIN.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(streams.getFirst().send(ListAndWatchResponse.getDefaultInstance().toByteArray())).isFalse();
  }

  private Server grpcJavaPodResources(Path socket, PodResourcesListerGrpc.PodResourcesListerImplBase service) throws Exception {
    var server = NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString())).channelType(EpollServerDomainSocketChannel.class)
        .bossEventLoopGroup(loop).workerEventLoopGroup(loop).addService(service).build().start();
    closing.add(() -> server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS));
    return server;
  }

  @Test
  void theClientReadsAnAnswerOfManyFramesAndWindows() throws Exception {
    // 15,000 pods: an answer of ~1 MB, which grpc-java sends only as our client opens its windows.
    var list = ListPodResourcesResponse.newBuilder();
    for (int i = 0; i < 15_000; i++) {
      list.addPodResources(PodResources.newBuilder().setName("pod-" + i).setNamespace("team-a").addContainers(ContainerResources.newBuilder()
          .setName("main").addDevices(ContainerDevices.newBuilder().setResourceName("aliyun.com/gpu").addDeviceIds("GPU-" + i + "-0000-1111-2222"))));
    }
    var expected = list.build();
    var socket = dir.resolve("kubelet.sock");
    grpcJavaPodResources(socket, new PodResourcesListerGrpc.PodResourcesListerImplBase() {
      @Override
      public void list(ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
        response.onNext(expected);
        response.onCompleted();
      }
    });

    var answer = GrpcClient.call(socket, "/v1.PodResourcesLister/List", ListPodResourcesRequest.getDefaultInstance().toByteArray(),
        WITHIN, 16 << 20, false);

    assertThat(answer.length).isGreaterThan(1_000_000);
    assertThat(ListPodResourcesResponse.parseFrom(answer)).isEqualTo(expected);
  }

  @Test
  void theClientSaysTheServersStatusAndItsOwnFailures() throws Exception {
    var socket = dir.resolve("kubelet.sock");
    var calls = new AtomicInteger();
    grpcJavaPodResources(socket, new PodResourcesListerGrpc.PodResourcesListerImplBase() {
      @Override
      public void list(ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
        if (calls.incrementAndGet() == 1) {
          response.onError(Status.PERMISSION_DENIED.withDescription("pod resources: 100% denied, ünicode").asRuntimeException());
        }
        // the second call is never answered
      }
    });
    var list = ListPodResourcesRequest.getDefaultInstance().toByteArray();

    assertThatThrownBy(() -> GrpcClient.call(socket, "/v1.PodResourcesLister/List", list, WITHIN, 1 << 20, false))
        .isInstanceOfSatisfying(GrpcException.class, e -> {
          assertThat(e.codeName()).isEqualTo("PERMISSION_DENIED");
          assertThat(e.description()).isEqualTo("pod resources: 100% denied, ünicode");
        });
    assertThatThrownBy(() -> GrpcClient.call(socket, "/v1.PodResourcesLister/List", list, Duration.ofMillis(300), 1 << 20, false))
        .isInstanceOfSatisfying(GrpcException.class, e -> {
          assertThat(e.codeName()).isEqualTo("DEADLINE_EXCEEDED");
          assertThat(e.description()).isEqualTo("no answer within 300 ms");
        });
    assertThatThrownBy(() -> GrpcClient.call(socket, "/v1.PodResourcesLister/Get", list, WITHIN, 1 << 20, false))
        .isInstanceOfSatisfying(GrpcException.class, e -> assertThat(e.codeName()).isEqualTo("UNIMPLEMENTED"));
    var absent = dir.resolve("absent.sock");
    assertThatThrownBy(() -> GrpcClient.call(absent, "/v1.PodResourcesLister/List", list, WITHIN, 1 << 20, false))
        .isInstanceOfSatisfying(GrpcException.class, e -> {
          assertThat(e.codeName()).isEqualTo("UNAVAILABLE");
          assertThat(e.description()).startsWith("cannot connect to " + absent + ": ");
        });
  }

  @Test
  void waitingForReadyConnectsOnceTheServerListens() throws Exception {
    var socket = dir.resolve("late.sock");
    var server = new Thread(() -> {
      try {
        Thread.sleep(400);
        grpcJavaPodResources(socket, new PodResourcesListerGrpc.PodResourcesListerImplBase() {
          @Override
          public void list(ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
            response.onNext(ListPodResourcesResponse.newBuilder().addPodResources(PodResources.newBuilder().setName("late")).build());
            response.onCompleted();
          }
        });
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    });
    server.start();

    var answer = GrpcClient.call(socket, "/v1.PodResourcesLister/List", ListPodResourcesRequest.getDefaultInstance().toByteArray(),
        WITHIN, 1 << 20, true);

    assertThat(ListPodResourcesResponse.parseFrom(answer).getPodResources(0).getName()).isEqualTo("late");
    server.join();
    assertThat(Files.exists(socket)).isTrue();
  }

  private static byte[] frameHeader(int length, int type, int flags, int stream) {
    return java.nio.ByteBuffer.allocate(9).put((byte) (length >>> 16)).put((byte) (length >>> 8)).put((byte) length)
        .put((byte) type).put((byte) flags).putInt(stream).array();
  }

  /** A raw client connection: the preface and empty SETTINGS sent, nothing read. */
  private static java.nio.channels.SocketChannel rawClient(Path socket) throws Exception {
    var channel = java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX);
    channel.connect(java.net.UnixDomainSocketAddress.of(socket));
    channel.write(java.nio.ByteBuffer.wrap(Http2Connection.PREFACE));
    channel.write(java.nio.ByteBuffer.wrap(new byte[] {0, 0, 0, Http2Connection.SETTINGS, 0, 0, 0, 0, 0}));
    return channel;
  }

  @Test
  void aClientThatStopsReadingHoldsUpOnlyItsOwnCalls() throws Exception {
    var large = PreferredAllocationResponse.newBuilder().addContainerResponses(ContainerPreferredAllocationResponse.newBuilder()
        .addAllDeviceIDs(IntStream.range(0, 30).mapToObj(i -> "GPU-" + i + "-0000-1111-2222-333333333333").toList())).build().toByteArray();
    serve(Map.of(PLUGIN + "GetPreferredAllocation", request -> large,
        PLUGIN + "GetDevicePluginOptions", request -> io.gpuadmission.node.deviceplugin.v1beta1.DevicePluginOptions.newBuilder()
            .setGetPreferredAllocationAvailable(true).build().toByteArray()), Map.of());
    var socket = dir.resolve("plugin.sock");
    // Thousands of calls pipelined on one connection whose answers are never read: its calls thread
    // blocks writing once the socket's buffers are full.
    var stuck = rawClient(socket);
    closing.add(stuck);
    var headers = new java.io.ByteArrayOutputStream();
    new com.twitter.hpack.Encoder(0).encodeHeader(headers, ":path".getBytes(), (PLUGIN + "GetPreferredAllocation").getBytes(), false);
    var block = headers.toByteArray();
    var frames = new java.io.ByteArrayOutputStream();
    for (int stream = 1; stream < 12_000; stream += 2) {
      frames.write(frameHeader(block.length, Http2Connection.HEADERS, Http2Connection.FLAG_END_HEADERS, stream));
      frames.write(block);
      frames.write(frameHeader(5, Http2Connection.DATA, Http2Connection.FLAG_END_STREAM, stream));
      frames.write(new byte[] {0, 0, 0, 0, 0});
    }
    var pending = java.nio.ByteBuffer.wrap(frames.toByteArray());
    var writer = new Thread(() -> {
      try {
        while (pending.hasRemaining()) {
          stuck.write(pending);
        }
      } catch (java.io.IOException ignored) {
        // closed at the end of the test
      }
    });
    writer.setDaemon(true);
    writer.start();
    Thread.sleep(1000);

    var client = grpcJavaClientOf(socket);
    assertThat(client.getDevicePluginOptions(Empty.getDefaultInstance()).getGetPreferredAllocationAvailable()).isTrue();
  }

  @Test
  void aMalformedFrameEndsItsConnectionWithAGoAwayAndTheServerServesOn() throws Exception {
    serve(Map.of(PLUGIN + "GetDevicePluginOptions", request -> new byte[0]), Map.of());
    var socket = dir.resolve("plugin.sock");
    var malformed = Map.of(
        "WINDOW_UPDATE without its increment", new byte[] {0, 0, 0, Http2Connection.WINDOW_UPDATE, 0, 0, 0, 0, 0},
        "WINDOW_UPDATE of 0", new byte[] {0, 0, 4, Http2Connection.WINDOW_UPDATE, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        "padded HEADERS without its pad length",
        new byte[] {0, 0, 0, Http2Connection.HEADERS, Http2Connection.FLAG_PADDED | Http2Connection.FLAG_END_HEADERS, 0, 0, 0, 1},
        "PING of 2 bytes", new byte[] {0, 0, 2, Http2Connection.PING, 0, 0, 0, 0, 0, 1, 2},
        "HEADERS on stream 0", new byte[] {0, 0, 1, Http2Connection.HEADERS, Http2Connection.FLAG_END_HEADERS, 0, 0, 0, 0, (byte) 0x82},
        "SETTINGS of 5 bytes", new byte[] {0, 0, 5, Http2Connection.SETTINGS, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0});
    var expected = Map.of("WINDOW_UPDATE without its increment", Http2Connection.FRAME_SIZE_ERROR,
        "WINDOW_UPDATE of 0", Http2Connection.PROTOCOL_ERROR, "padded HEADERS without its pad length", Http2Connection.PROTOCOL_ERROR,
        "PING of 2 bytes", Http2Connection.FRAME_SIZE_ERROR, "HEADERS on stream 0", Http2Connection.PROTOCOL_ERROR,
        "SETTINGS of 5 bytes", Http2Connection.FRAME_SIZE_ERROR);
    for (var entry : malformed.entrySet()) {
      var frame = entry.getValue();
      try (var raw = rawClient(socket)) {
        raw.write(java.nio.ByteBuffer.wrap(frame));
        var in = java.nio.channels.Channels.newInputStream(raw);
        var seen = new java.util.ArrayList<Integer>();
        var header = new byte[9];
        while (in.readNBytes(header, 0, 9) == 9) {
          int length = ((header[0] & 0xff) << 16) | ((header[1] & 0xff) << 8) | (header[2] & 0xff);
          var payload = in.readNBytes(length);
          seen.add(header[3] & 0xff);
          if ((header[3] & 0xff) == Http2Connection.GOAWAY) {
            seen.add(java.nio.ByteBuffer.wrap(payload, 4, 4).getInt());
          }
        }
        assertThat(seen).as("frames the server sent for %s", entry.getKey()).endsWith(Http2Connection.GOAWAY, expected.get(entry.getKey()));
      }
    }
    assertThat(grpcJavaClientOf(socket).getDevicePluginOptions(Empty.getDefaultInstance())).isNotNull();
  }

  @Test
  void theDeadlineHoldsWhileTheServerDoesNotEvenAccept() throws Exception {
    var socket = dir.resolve("full.sock");
    try (var listener = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
      listener.bind(java.net.UnixDomainSocketAddress.of(socket), 1);
      // Fill its backlog: a blocking connect to it would then wait for an accept that never comes.
      var filling = new ArrayList<java.nio.channels.SocketChannel>();
      try {
        while (filling.size() < 64) {
          var channel = java.nio.channels.SocketChannel.open(java.net.StandardProtocolFamily.UNIX);
          channel.configureBlocking(false);
          filling.add(channel);
          channel.connect(java.net.UnixDomainSocketAddress.of(socket));
        }
      } catch (java.io.IOException full) {
        // the backlog is full
      }
      var started = System.nanoTime();
      assertThatThrownBy(() -> GrpcClient.call(socket, "/v1.PodResourcesLister/List", new byte[0], Duration.ofMillis(500), 1 << 20, false))
          .isInstanceOfSatisfying(GrpcException.class, e -> assertThat(e.codeName()).isEqualTo("DEADLINE_EXCEEDED"));
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
      for (var channel : filling) {
        channel.close();
      }
    }
  }
}
