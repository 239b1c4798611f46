package io.gpuadmission.node;

import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * grpc-java on the kubelet's Unix sockets (Netty's epoll domain sockets): the channels the agent
 * calls the kubelet on and the device plugin's server, all on one Netty event loop thread (the
 * agent's traffic is a call every few seconds and a few per container start).
 */
final class KubeletSockets {
  /** A device plugin's requests are a few hundred bytes; gRPC's own default limit. */
  static final int MAX_REQUEST = 4 << 20;
  /**
   * Calls open at once on one connection: the kubelet keeps one ListAndWatch and makes one call at
   * a time beside it; RFC 9113 section 6.5.2 advises no fewer than 100.
   */
  static final int MAX_CALLS = 100;
  /** From accept to a started HTTP/2 connection: the kubelet's grpc-go writes its preface at once. */
  static final Duration HANDSHAKE = Duration.ofSeconds(10);
  /** A connection with no call open for this long is ended (the kubelet's ListAndWatch is always open). */
  static final Duration MAX_IDLE = Duration.ofMinutes(5);

  private static final EventLoopGroup LOOP = new EpollEventLoopGroup(1, new DefaultThreadFactory("kubelet-grpc", true));

  private KubeletSockets() {}

  /** A channel to the server on {@code socket}; it connects at its first call, and again after the server went. */
  static ManagedChannel channel(Path socket, int maxAnswer) {
    return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .channelType(EpollDomainSocketChannel.class)
        .eventLoopGroup(LOOP)
        .usePlaintext()
        // What grpc-go sends for a Unix socket, and what the kubelet expects.
        .overrideAuthority("localhost")
        .maxInboundMessageSize(maxAnswer)
        .build();
  }

  /**
   * Serves {@code service} on {@code socket} (a file left there is replaced), its calls run one at
   * a time on {@code calls}.
   */
  static Server serve(Path socket, BindableService service, Executor calls) throws IOException {
    Files.deleteIfExists(socket);
    return NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .channelType(EpollServerDomainSocketChannel.class)
        .bossEventLoopGroup(LOOP)
        .workerEventLoopGroup(LOOP)
        .executor(calls)
        .maxInboundMessageSize(MAX_REQUEST)
        .maxConcurrentCallsPerConnection(MAX_CALLS)
        .handshakeTimeout(HANDSHAKE.toMillis(), TimeUnit.MILLISECONDS)
        .maxConnectionIdle(MAX_IDLE.toMillis(), TimeUnit.MILLISECONDS)
        .addService(service)
        .build()
        .start();
  }
}
