package io.gpuadmission.node;

import io.gpuadmission.node.podresources.v1.AllocatableResourcesRequest;
import io.gpuadmission.node.podresources.v1.AllocatableResourcesResponse;
import io.gpuadmission.node.podresources.v1.ListPodResourcesRequest;
import io.gpuadmission.node.podresources.v1.ListPodResourcesResponse;
import io.gpuadmission.node.podresources.v1.PodResourcesListerGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.unix.DomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's PodResources API (v1) on its Unix socket, over one gRPC channel with one event
 * loop thread. A kubelet restart removes the socket and makes a new one at the same path: the
 * channel reconnects by itself, and a failed call resets its reconnect backoff so that the next
 * call (the agent's next round) connects at once instead of after gRPC's growing backoff (up to
 * two minutes).
 */
public final class PodResourcesClient implements AutoCloseable {
  /** The kubelet answers up to 16 MiB (podresources.DefaultMaxMsgSize); gRPC's default is 4. */
  static final int MAX_MESSAGE = 16 << 20;

  private final Path socket;
  private final Duration timeout;
  private final EpollEventLoopGroup loop;
  private final ManagedChannel channel;
  private final PodResourcesListerGrpc.PodResourcesListerBlockingStub stub;

  public PodResourcesClient(Path socket, Duration timeout) {
    if (!Epoll.isAvailable()) {
      throw new IllegalStateException("the kubelet's PodResources socket needs Linux (Netty epoll): "
          + Epoll.unavailabilityCause().getMessage());
    }
    this.socket = socket;
    this.timeout = timeout;
    this.loop = new EpollEventLoopGroup(1, r -> {
      var thread = new Thread(r, "pod-resources");
      thread.setDaemon(true);
      return thread;
    });
    this.channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .eventLoopGroup(loop)
            .channelType(EpollDomainSocketChannel.class)
            .usePlaintext()
            // Calls are blocking and answered on the calling thread: no executor of gRPC's own.
            .directExecutor()
            .maxInboundMessageSize(MAX_MESSAGE)
            .overrideAuthority("localhost")
            .build();
    this.stub = PodResourcesListerGrpc.newBlockingStub(channel);
  }

  /** What every pod's containers were given. Throws {@link StatusRuntimeException} on failure. */
  public ListPodResourcesResponse list() {
    return call(stub -> stub.list(ListPodResourcesRequest.getDefaultInstance()));
  }

  /** Every device the kubelet knows on this node (whether allocated or not). */
  public AllocatableResourcesResponse allocatable() {
    return call(stub -> stub.getAllocatableResources(AllocatableResourcesRequest.getDefaultInstance()));
  }

  public Path socket() {
    return socket;
  }

  /**
   * One call within the timeout. A channel that saw the socket go fails calls at once until its
   * backoff ends: then the backoff is reset and the call made again, waiting (within the timeout)
   * for the connection, so that the first round after a kubelet restart already gets an answer.
   */
  private <T> T call(java.util.function.Function<PodResourcesListerGrpc.PodResourcesListerBlockingStub, T> rpc) {
    var deadline = io.grpc.Deadline.after(timeout.toMillis(), TimeUnit.MILLISECONDS);
    try {
      return rpc.apply(stub.withDeadline(deadline));
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || deadline.isExpired() || !Files.exists(socket)) {
        throw e;
      }
      channel.resetConnectBackoff();
      try {
        return rpc.apply(stub.withDeadline(deadline).withWaitForReady());
      } catch (StatusRuntimeException again) {
        throw again.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED ? e : again;
      }
    }
  }

  /** Why a call failed, in a line: the status, or that the socket is not there. */
  public String problem(StatusRuntimeException e) {
    if (!Files.exists(socket)) {
      return "no socket: the kubelet is restarting, or its pod-resources directory is not mounted";
    }
    var description = e.getStatus().getDescription();
    return e.getStatus().getCode() + (description == null ? "" : ": " + description.lines().findFirst().orElse(""));
  }

  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
