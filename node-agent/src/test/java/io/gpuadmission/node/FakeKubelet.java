package io.gpuadmission.node;

import io.gpuadmission.node.podresources.v1.AllocatableResourcesRequest;
import io.gpuadmission.node.podresources.v1.AllocatableResourcesResponse;
import io.gpuadmission.node.podresources.v1.ContainerDevices;
import io.gpuadmission.node.podresources.v1.ContainerResources;
import io.gpuadmission.node.podresources.v1.ListPodResourcesRequest;
import io.gpuadmission.node.podresources.v1.ListPodResourcesResponse;
import io.gpuadmission.node.podresources.v1.PodResources;
import io.gpuadmission.node.podresources.v1.PodResourcesListerGrpc;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The kubelet's PodResources service as tests need it: grpc-java's server in this process, bound to
 * a Unix socket in a temporary directory, answering List with what the test sets. {@link #stop}
 * and {@link #start} are a kubelet restart: the socket file goes and a new one appears at the same
 * path, as the kubelet removes and re-creates it.
 */
public final class FakeKubelet implements AutoCloseable {
  private final Path socket;
  private final EpollEventLoopGroup loop = new EpollEventLoopGroup(1);
  private final AtomicInteger lists = new AtomicInteger();
  private volatile ListPodResourcesResponse answer = ListPodResourcesResponse.getDefaultInstance();
  private volatile AllocatableResourcesResponse allocatable = AllocatableResourcesResponse.getDefaultInstance();
  private Server server;

  private FakeKubelet(Path socket) {
    this.socket = socket;
  }

  /** Serving at {@code dir/kubelet.sock}. */
  public static FakeKubelet start(Path dir) {
    var kubelet = new FakeKubelet(dir.resolve("kubelet.sock"));
    kubelet.start();
    return kubelet;
  }

  public Path socket() {
    return socket;
  }

  /** What List answers from now on. */
  public void answer(PodResources... pods) {
    answer = ListPodResourcesResponse.newBuilder().addAllPodResources(List.of(pods)).build();
  }

  /** What GetAllocatableResources answers from now on. */
  public void allocatable(ContainerDevices... devices) {
    allocatable = AllocatableResourcesResponse.newBuilder().addAllDevices(List.of(devices)).build();
  }

  /** List calls answered so far. */
  public int lists() {
    return lists.get();
  }

  public synchronized void start() {
    try {
      server =
          NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
              .channelType(EpollServerDomainSocketChannel.class)
              .bossEventLoopGroup(loop)
              .workerEventLoopGroup(loop)
              .directExecutor()
              .addService(new PodResourcesListerGrpc.PodResourcesListerImplBase() {
                @Override
                public void list(ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
                  lists.incrementAndGet();
                  response.onNext(answer);
                  response.onCompleted();
                }

                @Override
                public void getAllocatableResources(AllocatableResourcesRequest request, StreamObserver<AllocatableResourcesResponse> response) {
                  response.onNext(allocatable);
                  response.onCompleted();
                }
              })
              .build()
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The kubelet goes: its server stops and its socket file is removed. */
  public synchronized void stop() {
    server.shutdownNow();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
      Files.deleteIfExists(socket);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    stop();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  public static PodResources pod(String namespace, String name, ContainerResources... containers) {
    return PodResources.newBuilder().setNamespace(namespace).setName(name).addAllContainers(List.of(containers)).build();
  }

  public static ContainerResources container(String name, ContainerDevices... devices) {
    return ContainerResources.newBuilder().setName(name).addAllDevices(List.of(devices)).build();
  }

  public static ContainerDevices devices(String resource, String... ids) {
    return ContainerDevices.newBuilder().setResourceName(resource).addAllDeviceIds(List.of(ids)).build();
  }
}
