package io.gpuadmission.node;

import io.gpuadmission.node.deviceplugin.v1beta1.AllocateRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.AllocateResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.CDIDevice;
import io.gpuadmission.node.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.ContainerPreferredAllocationResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.Device;
import io.gpuadmission.node.deviceplugin.v1beta1.DevicePluginGrpc;
import io.gpuadmission.node.deviceplugin.v1beta1.DevicePluginOptions;
import io.gpuadmission.node.deviceplugin.v1beta1.Empty;
import io.gpuadmission.node.deviceplugin.v1beta1.ListAndWatchResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.NUMANode;
import io.gpuadmission.node.deviceplugin.v1beta1.PreStartContainerRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.PreStartContainerResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.PreferredAllocationRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.PreferredAllocationResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.RegisterRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.RegistrationGrpc;
import io.gpuadmission.node.deviceplugin.v1beta1.TopologyInfo;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The node agent's device plugin for one resource ({@code aliyun.com/gpu}): the kubelet's device
 * plugin API v1beta1 served on a Unix socket in the kubelet's device-plugins directory, registered
 * with the kubelet's {@code kubelet.sock} there. The kubelet's device manager (v1.32) answers a
 * Register by connecting to the socket, asking GetDevicePluginOptions and opening ListAndWatch; at
 * each container's admission it asks GetPreferredAllocation (the options say it is available),
 * then Allocate with the devices it keeps.
 *
 * <p>A kubelet restart empties the directory (its device manager removes every file but its
 * checkpoint) and makes a new {@code kubelet.sock}: {@link #ensureRegistered} (called every round,
 * and when the directory shows a new {@code kubelet.sock}) then serves a new socket and registers
 * again, as NVIDIA's plugin does.
 */
final class DevicePluginServer implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(DevicePluginServer.class);
  static final String VERSION = "v1beta1";
  static final String KUBELET_SOCKET = "kubelet.sock";
  static final String HEALTHY = "Healthy";
  static final String UNHEALTHY = "Unhealthy";
  static final Duration REGISTER_TIMEOUT = Duration.ofSeconds(10);

  /** How Allocate tells the container runtime which GPUs: NVIDIA's container toolkit reads either. */
  enum Handover {
    /** {@code NVIDIA_VISIBLE_DEVICES=<UUID>,<UUID>}. */
    ENV,
    /** CDI device names {@code nvidia.com/gpu=<UUID>} (the kubelet's DevicePluginCDIDevices, GA in 1.31). */
    CDI
  }

  private final Path dir;
  private final String resource;
  private final String endpoint;
  private final PluginDevices devices;
  private final GpuHandover handover;
  private final Handover how;
  private final Duration timeout;
  private final EpollEventLoopGroup loop;
  private final List<ServerCallStreamObserver<ListAndWatchResponse>> watchers = new CopyOnWriteArrayList<>();
  private Server server;
  private Object kubeletSocketKey;
  private boolean registered;
  private String lastProblem = "";

  DevicePluginServer(Path dir, String resource, PluginDevices devices, GpuHandover handover, Handover how, Duration timeout) {
    this.dir = dir;
    this.resource = resource;
    this.endpoint = "gpu-admission-" + resource.replace('/', '-') + ".sock";
    this.devices = devices;
    this.handover = handover;
    this.how = how;
    this.timeout = timeout;
    this.loop = new EpollEventLoopGroup(1, r -> {
      var thread = new Thread(r, "device-plugin");
      thread.setDaemon(true);
      return thread;
    });
  }

  Path socket() {
    return dir.resolve(endpoint);
  }

  String resource() {
    return resource;
  }

  synchronized boolean registered() {
    return registered;
  }

  /**
   * Serves and registers when not yet done, when the plugin's socket is gone or when the kubelet's
   * socket is a new one (a kubelet restart). Failures are said once and retried on the next call.
   */
  synchronized void ensureRegistered() {
    var kubelet = dir.resolve(KUBELET_SOCKET);
    Object key;
    try {
      key = Files.exists(kubelet) ? Files.readAttributes(kubelet, java.nio.file.attribute.BasicFileAttributes.class).fileKey() : null;
    } catch (IOException e) {
      key = null;
    }
    if (registered && Files.exists(socket()) && key != null && key.equals(kubeletSocketKey)) {
      return;
    }
    if (key == null) {
      problem("no " + kubelet + ": the kubelet is restarting, or its device-plugins directory is not mounted");
      registered = false;
      return;
    }
    if (registered) {
      LOG.infof("the kubelet restarted (new %s): serving %s again and registering", kubelet, resource);
      handover.kubeletRestarted();
    }
    registered = false;
    try {
      serve();
      register(kubelet);
    } catch (IOException | StatusRuntimeException e) {
      problem("cannot register " + resource + " with the kubelet at " + kubelet + ": " + describe(e));
      return;
    }
    kubeletSocketKey = key;
    registered = true;
    lastProblem = "";
    LOG.infof("device plugin for %s registered with the kubelet (%s, %d GPUs)", resource, socket(), devices.all().size());
  }

  /** Sends the device list again to every kubelet watching (a GPU's health changed). */
  void devicesChanged() {
    var list = list();
    for (var watcher : watchers) {
      try {
        watcher.onNext(list);
      } catch (RuntimeException gone) {
        watchers.remove(watcher);
      }
    }
  }

  private void problem(String text) {
    if (!text.equals(lastProblem)) {
      LOG.warn(text + "; trying again every round");
      lastProblem = text;
    }
  }

  private static String describe(Exception e) {
    if (e instanceof StatusRuntimeException s) {
      return s.getStatus().getCode() + (s.getStatus().getDescription() == null ? "" : ": " + s.getStatus().getDescription());
    }
    return e.getMessage();
  }

  private void serve() throws IOException {
    stopServer();
    Files.deleteIfExists(socket());
    server = NettyServerBuilder.forAddress(new DomainSocketAddress(socket().toString()))
        .channelType(EpollServerDomainSocketChannel.class)
        .bossEventLoopGroup(loop)
        .workerEventLoopGroup(loop)
        // Every call is answered from memory at once: no executor of gRPC's own.
        .directExecutor()
        .addService(new Service())
        .build()
        .start();
  }

  private void register(Path kubelet) {
    var channel = NettyChannelBuilder.forAddress(new DomainSocketAddress(kubelet.toString()))
        .eventLoopGroup(loop)
        .channelType(EpollDomainSocketChannel.class)
        .usePlaintext()
        .directExecutor()
        .overrideAuthority("localhost")
        .build();
    try {
      // The kubelet answers only once it has connected back and asked for the options (it dials
      // with a 10 s timeout itself): allow as long.
      RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(Math.max(timeout.toMillis(), REGISTER_TIMEOUT.toMillis()), TimeUnit.MILLISECONDS)
          .withWaitForReady()
          .register(RegisterRequest.newBuilder().setVersion(VERSION).setEndpoint(endpoint).setResourceName(resource)
              .setOptions(options()).build());
    } finally {
      channel.shutdownNow();
    }
  }

  private static DevicePluginOptions options() {
    return DevicePluginOptions.newBuilder().setGetPreferredAllocationAvailable(true).build();
  }

  private ListAndWatchResponse list() {
    var out = ListAndWatchResponse.newBuilder();
    for (var d : devices.all()) {
      var device = Device.newBuilder().setID(d.uuid()).setHealth(d.healthy() ? HEALTHY : UNHEALTHY);
      d.numa().ifPresent(n -> device.setTopology(TopologyInfo.newBuilder().addNodes(NUMANode.newBuilder().setID(n))));
      out.addDevices(device);
    }
    return out.build();
  }

  private ContainerAllocateResponse allocation(List<String> ids) {
    var sorted = new ArrayList<String>(ids);
    sorted.sort(java.util.Comparator.comparingInt(id -> devices.byUuid(id).map(PluginDevices.Device::index).orElse(Integer.MAX_VALUE)));
    var out = ContainerAllocateResponse.newBuilder();
    if (how == Handover.CDI) {
      sorted.forEach(id -> out.addCdiDevices(CDIDevice.newBuilder().setName("nvidia.com/gpu=" + id)));
    } else {
      out.putEnvs("NVIDIA_VISIBLE_DEVICES", String.join(",", sorted));
    }
    return out.build();
  }

  private final class Service extends DevicePluginGrpc.DevicePluginImplBase {
    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> response) {
      response.onNext(options());
      response.onCompleted();
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> response) {
      var call = (ServerCallStreamObserver<ListAndWatchResponse>) response;
      call.setOnCancelHandler(() -> watchers.remove(call));
      watchers.add(call);
      call.onNext(list());
    }

    @Override
    public void getPreferredAllocation(PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> response) {
      var out = PreferredAllocationResponse.newBuilder();
      for (var container : request.getContainerRequestsList()) {
        out.addContainerResponses(ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(
            handover.preferred(container.getAvailableDeviceIDsList(), container.getMustIncludeDeviceIDsList(), container.getAllocationSize())));
      }
      response.onNext(out.build());
      response.onCompleted();
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> response) {
      var out = AllocateResponse.newBuilder();
      for (var container : request.getContainerRequestsList()) {
        for (var id : container.getDevicesIdsList()) {
          if (devices.byUuid(id).isEmpty()) {
            response.onError(Status.INVALID_ARGUMENT.withDescription("unknown device " + id + " of " + resource).asRuntimeException());
            return;
          }
        }
        out.addContainerResponses(allocation(container.getDevicesIdsList()));
      }
      response.onNext(out.build());
      response.onCompleted();
      // The kubelet has its answer: now the bookkeeping (and, queued, the pod's mark).
      for (var container : request.getContainerRequestsList()) {
        handover.allocated(container.getDevicesIdsList());
      }
    }

    @Override
    public void preStartContainer(PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> response) {
      response.onNext(PreStartContainerResponse.getDefaultInstance());
      response.onCompleted();
    }
  }

  private void stopServer() {
    watchers.forEach(w -> {
      try {
        w.onCompleted();
      } catch (RuntimeException ignored) {
        // the kubelet went first
      }
    });
    watchers.clear();
    if (server != null) {
      server.shutdownNow();
      try {
        server.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      server = null;
    }
  }

  @Override
  public synchronized void close() {
    stopServer();
    try {
      Files.deleteIfExists(socket());
    } catch (IOException ignored) {
      // the directory went with the kubelet
    }
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }
}
