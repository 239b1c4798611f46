package io.gpuadmission.node;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.node.deviceplugin.v1beta1.AllocateRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.ContainerAllocateRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.ContainerPreferredAllocationRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.DevicePluginGrpc;
import io.gpuadmission.node.deviceplugin.v1beta1.DevicePluginOptions;
import io.gpuadmission.node.deviceplugin.v1beta1.Empty;
import io.gpuadmission.node.deviceplugin.v1beta1.ListAndWatchResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.PreferredAllocationRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.RegisterRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.RegistrationGrpc;
import io.gpuadmission.node.podresources.v1.ContainerDevices;
import io.gpuadmission.node.podresources.v1.ContainerResources;
import io.gpuadmission.node.podresources.v1.PodResources;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's device manager (kubernetes pkg/kubelet/cm/devicemanager, v1.32) as the device
 * plugin meets it: a Registration server on {@code kubelet.sock} in the device-plugins directory
 * that, on Register, checks the version and resource name, connects to the plugin's socket (waiting
 * up to 10 s for it to accept, as the kubelet's blocking dial), asks GetDevicePluginOptions and
 * opens ListAndWatch; and {@link #admit}, which allocates a pod's
 * containers as {@code ManagerImpl.Allocate} does: init containers first, each taking devices an
 * earlier plain init container held first (in Go's random set order: no preference asked when
 * they suffice), then GetPreferredAllocation({@code available ∪ reused}, {@code reused}, the
 * container's request) when the options allow it, the preferred devices that are available, the
 * rest from the available ones in random order, then Allocate with the devices it keeps. No
 * topology manager policy (no NUMA hint): every device is "no affinity". What containers hold is
 * then what PodResources lists (regular containers and sidecars, not plain init containers).
 * {@link #restart} is a kubelet restart: it empties the directory but for its checkpoint, keeping
 * the allocations, and serves a new kubelet.sock; {@link #crash} and {@link #startAgain} the same
 * with a dead kubelet's socket file left in between.
 */
final class FakeDeviceManager implements AutoCloseable {
  private final Path dir;
  private final String resource;
  private final EpollEventLoopGroup loop = new EpollEventLoopGroup(1);
  private final List<Runnable> beforeAllocate = new CopyOnWriteArrayList<>();
  private Server server;
  private ManagedChannel plugin;
  private volatile DevicePluginOptions options;
  private volatile List<io.gpuadmission.node.deviceplugin.v1beta1.Device> devices = List.of();
  private final List<String> registrations = new CopyOnWriteArrayList<>();
  /** When each registration was answered, and when kubelet.sock last started listening (System.nanoTime). */
  private final List<Long> registeredAt = new CopyOnWriteArrayList<>();
  private volatile long listeningSince;
  /** Pod key to container name to devices (the checkpoint). */
  private final Map<String, Map<String, List<String>>> podDevices = new LinkedHashMap<>();
  private final Map<String, Set<String>> plainInit = new HashMap<>();
  /** Pod key to container name to what Allocate answered. */
  private final Map<String, Map<String, ContainerAllocateResponse>> responses = new HashMap<>();
  final List<String> calls = new CopyOnWriteArrayList<>();
  /** Each call to the plugin and how long its answer took, as the kubelet's client sees it (for benchmarks). */
  final List<Timed> timings = new CopyOnWriteArrayList<>();

  /** One call and its round trip over the plugin's socket. */
  record Timed(String call, long nanos) {}

  FakeDeviceManager(Path dir, String resource) {
    this.dir = dir;
    this.resource = resource;
    start();
  }

  Path socket() {
    return dir.resolve("kubelet.sock");
  }

  List<String> registrations() {
    return List.copyOf(registrations);
  }

  List<io.gpuadmission.node.deviceplugin.v1beta1.Device> devices() {
    return devices;
  }

  /** Runs {@code action} once between the next GetPreferredAllocation and its Allocate. */
  void beforeNextAllocate(Runnable action) {
    beforeAllocate.add(action);
  }

  synchronized void start() {
    try {
      server = NettyServerBuilder.forAddress(new DomainSocketAddress(socket().toString()))
          .channelType(EpollServerDomainSocketChannel.class).bossEventLoopGroup(loop).workerEventLoopGroup(loop)
          .addService(new RegistrationGrpc.RegistrationImplBase() {
            @Override
            public void register(RegisterRequest request, StreamObserver<Empty> response) {
              // plugin/v1beta1/server.go Register: version, extended resource name, then connect.
              if (!request.getVersion().equals("v1beta1")) {
                response.onError(Status.UNKNOWN.withDescription("unsupported version " + request.getVersion()).asRuntimeException());
                return;
              }
              if (!request.getResourceName().equals(resource)) {
                response.onError(Status.UNKNOWN.withDescription("unexpected resource " + request.getResourceName()).asRuntimeException());
                return;
              }
              try {
                connect(dir.resolve(request.getEndpoint()));
              } catch (RuntimeException e) {
                response.onError(Status.UNKNOWN.withDescription(e.getMessage()).asRuntimeException());
                return;
              }
              registrations.add(request.getResourceName() + " " + request.getEndpoint() + " preferred="
                  + request.getOptions().getGetPreferredAllocationAvailable());
              registeredAt.add(System.nanoTime());
              response.onNext(Empty.getDefaultInstance());
              response.onCompleted();
            }
          }).build().start();
      listeningSince = System.nanoTime();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether a registration was answered since kubelet.sock last started listening (by this kubelet, not the one before). */
  boolean registeredSinceListening() {
    return !registeredAt.isEmpty() && registeredAt.getLast() >= listeningSince;
  }

  /** How long after kubelet.sock last started listening the last registration was answered. */
  java.time.Duration lastRegistrationAfterListening() {
    return java.time.Duration.ofNanos(registeredAt.getLast() - listeningSince);
  }

  private void connect(Path endpoint) {
    if (plugin != null) {
      plugin.shutdownNow();
    }
    plugin = NettyChannelBuilder.forAddress(new DomainSocketAddress(endpoint.toString())).eventLoopGroup(loop)
        .channelType(EpollDomainSocketChannel.class).usePlaintext().overrideAuthority("localhost").build();
    // plugin/v1beta1 client.go dial: grpc.WithBlock() with a 10 s timeout, so a plugin socket that
    // does not accept (deleted, or not listening yet) holds Register's answer for up to 10 s.
    options = DevicePluginGrpc.newBlockingStub(plugin).withWaitForReady().withDeadlineAfter(10, TimeUnit.SECONDS)
        .getDevicePluginOptions(Empty.getDefaultInstance());
    var channel = plugin;
    // Outside the Register call's context (the kubelet's client runs with context.Background()):
    // the stream must outlive that call.
    io.grpc.Context.ROOT.run(() -> DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), new StreamObserver<>() {
      @Override
      public void onNext(ListAndWatchResponse value) {
        devices = value.getDevicesList();
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {}
    }));
  }

  /**
   * The kubelet drops the plugin, its own socket staying: what it does when the plugin's
   * ListAndWatch ends (plugin/v1beta1 client.go Run, then Disconnect): it closes its connection.
   */
  synchronized void dropPlugin() {
    if (plugin != null) {
      plugin.shutdownNow();
      plugin = null;
    }
    devices = List.of();
  }

  /** The kubelet restarts: its directory is emptied but for the checkpoint, and a new kubelet.sock appears. */
  synchronized void restart() {
    stop();
    startAgain();
  }

  /**
   * The kubelet is killed: its server and its connection to the plugin go (the plugin's
   * ListAndWatch ends), its socket file stays behind with nobody listening on it.
   */
  synchronized void crash() {
    stop();
    try (var stale = java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX)) {
      stale.bind(java.net.UnixDomainSocketAddress.of(socket()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The kubelet starts (after {@link #crash}): as at every start, it empties the directory but for its checkpoint, then listens. */
  synchronized void startAgain() {
    try (var files = Files.list(dir)) {
      for (var file : files.toList()) {
        if (!file.getFileName().toString().equals("kubelet_internal_checkpoint")) {
          Files.deleteIfExists(file);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    devices = List.of();
    start();
  }

  synchronized void stop() {
    if (plugin != null) {
      plugin.shutdownNow();
      plugin = null;
    }
    server.shutdownNow();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
      Files.deleteIfExists(socket());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Admits one pod, container by container, as the device manager does; returns container to devices. */
  synchronized Map<String, List<String>> admit(Pod pod) {
    var key = pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    var reuse = new HashSet<String>();
    var held = new LinkedHashMap<String, List<String>>();
    var init = pod.getSpec().getInitContainers() == null ? List.<Container>of() : pod.getSpec().getInitContainers();
    var ordered = new ArrayList<Container>(init);
    ordered.addAll(pod.getSpec().getContainers());
    for (var container : ordered) {
      var required = asked(container, resource);
      if (required <= 0) {
        continue;
      }
      var allocated = new HashSet<String>();
      var needed = required;
      // allocateRemainingFrom(reusableDevices): Go set order, i.e. none in particular.
      for (var d : reuse) {
        if (needed == 0) {
          break;
        }
        allocated.add(d);
        needed--;
      }
      if (needed > 0) {
        var available = new HashSet<String>();
        devices.stream().filter(d -> d.getHealth().equals("Healthy")).forEach(d -> available.add(d.getID()));
        available.removeAll(inUse());
        available.removeAll(allocated);
        if (available.size() < needed) {
          throw new IllegalStateException("requested number of devices unavailable for " + resource + ". Requested: " + needed
              + ", Available: " + available.size());
        }
        if (options.getGetPreferredAllocationAvailable()) {
          var offered = new HashSet<>(available);
          offered.addAll(allocated);
          var request = PreferredAllocationRequest.newBuilder().addContainerRequests(ContainerPreferredAllocationRequest.newBuilder()
              .addAllAvailableDeviceIDs(offered).addAllMustIncludeDeviceIDs(allocated).setAllocationSize(required)).build();
          var asked = System.nanoTime();
          var preferred = DevicePluginGrpc.newBlockingStub(plugin).withDeadlineAfter(5, TimeUnit.SECONDS).getPreferredAllocation(request);
          timings.add(new Timed("GetPreferredAllocation", System.nanoTime() - asked));
          calls.add("GetPreferredAllocation " + container.getName() + " " + required);
          for (var d : preferred.getContainerResponses(0).getDeviceIDsList()) {
            if (needed > 0 && available.contains(d) && allocated.add(d)) {
              needed--;
            }
          }
        }
        for (var d : available) {
          if (needed == 0) {
            break;
          }
          if (allocated.add(d)) {
            needed--;
          }
        }
      }
      var actions = List.copyOf(beforeAllocate);
      beforeAllocate.clear();
      actions.forEach(Runnable::run);
      var request = AllocateRequest.newBuilder().addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(allocated)).build();
      var asked = System.nanoTime();
      var answer = DevicePluginGrpc.newBlockingStub(plugin).withDeadlineAfter(5, TimeUnit.SECONDS).allocate(request);
      timings.add(new Timed("Allocate", System.nanoTime() - asked));
      calls.add("Allocate " + container.getName() + " " + allocated.size());
      responses.computeIfAbsent(key, k -> new HashMap<>()).put(container.getName(), answer.getContainerResponses(0));
      var devs = List.copyOf(allocated);
      held.put(container.getName(), devs);
      podDevices.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(container.getName(), devs);
      var isInit = init.contains(container);
      if (isInit && !"Always".equals(container.getRestartPolicy())) {
        reuse.addAll(allocated);
        plainInit.computeIfAbsent(key, k -> new HashSet<>()).add(container.getName());
      } else {
        reuse.removeAll(allocated);
      }
    }
    return held;
  }

  /** GetDevicePluginOptions on the connection the kubelet allocates on: the plugin's cheapest call, a benchmark's baseline. */
  Timed options() {
    var asked = System.nanoTime();
    DevicePluginGrpc.newBlockingStub(plugin).withDeadlineAfter(5, TimeUnit.SECONDS).getDevicePluginOptions(Empty.getDefaultInstance());
    var timed = new Timed("GetDevicePluginOptions", System.nanoTime() - asked);
    timings.add(timed);
    return timed;
  }

  /** What Allocate answered for a container. */
  synchronized ContainerAllocateResponse response(String podKey, String container) {
    return responses.get(podKey).get(container);
  }

  /** The pod's containers end: the kubelet frees their devices. */
  synchronized void remove(String podKey) {
    podDevices.remove(podKey);
  }

  private Set<String> inUse() {
    var out = new HashSet<String>();
    podDevices.values().forEach(m -> m.values().forEach(out::addAll));
    return out;
  }

  /** What the kubelet's PodResources List says: regular containers and sidecars, not plain init containers. */
  synchronized PodResources[] podResources() {
    var out = new ArrayList<PodResources>();
    podDevices.forEach((key, containers) -> {
      var slash = key.indexOf('/');
      var pod = PodResources.newBuilder().setNamespace(key.substring(0, slash)).setName(key.substring(slash + 1));
      containers.forEach((name, devs) -> {
        if (!plainInit.getOrDefault(key, Set.of()).contains(name)) {
          pod.addContainers(ContainerResources.newBuilder().setName(name)
              .addDevices(ContainerDevices.newBuilder().setResourceName(resource).addAllDeviceIds(devs)));
        }
      });
      out.add(pod.build());
    });
    return out.toArray(PodResources[]::new);
  }

  @Override
  public void close() {
    stop();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  /** What a container asks of {@code resource} (whole devices): its limit, else its request, else 0. */
  private static int asked(Container container, String resource) {
    var resources = container.getResources();
    if (resources == null) {
      return 0;
    }
    var limit = resources.getLimits() == null ? null : resources.getLimits().get(resource);
    var quantity = limit != null ? limit : resources.getRequests() == null ? null : resources.getRequests().get(resource);
    return quantity == null ? 0 : quantity.getNumericalAmount().intValueExact();
  }
}
