package io.gpuadmission.node;

import io.gpuadmission.node.deviceplugin.v1beta1.AllocateRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.AllocateResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.CDIDevice;
import io.gpuadmission.node.deviceplugin.v1beta1.ContainerAllocateResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.ContainerPreferredAllocationResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.Device;
import io.gpuadmission.node.deviceplugin.v1beta1.DevicePluginOptions;
import io.gpuadmission.node.deviceplugin.v1beta1.Empty;
import io.gpuadmission.node.deviceplugin.v1beta1.ListAndWatchResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.NUMANode;
import io.gpuadmission.node.deviceplugin.v1beta1.PreStartContainerRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.PreStartContainerResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.PreferredAllocationRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.PreferredAllocationResponse;
import io.gpuadmission.node.deviceplugin.v1beta1.RegisterRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.TopologyInfo;
import io.gpuadmission.node.grpc.GrpcClient;
import io.gpuadmission.node.grpc.GrpcException;
import io.gpuadmission.node.grpc.GrpcServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
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
  private final List<GrpcServer.Stream> watchers = new CopyOnWriteArrayList<>();
  private volatile GrpcServer server;
  // Which serve() the current server is, and whether the kubelet's ListAndWatch on it has ended.
  private volatile int generation;
  private volatile boolean streamLost;
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
    if (registered && !streamLost && Files.exists(socket()) && key != null && key.equals(kubeletSocketKey)) {
      return;
    }
    if (key == null) {
      problem("no " + kubelet + ": the kubelet is restarting, or its device-plugins directory is not mounted");
      registered = false;
      return;
    }
    if (registered && key.equals(kubeletSocketKey) && streamLost) {
      LOG.infof("the kubelet's ListAndWatch of %s ended: serving it again and registering", resource);
    } else if (registered) {
      LOG.infof("the kubelet restarted (new %s): serving %s again and registering", kubelet, resource);
      handover.kubeletRestarted();
    }
    registered = false;
    try {
      serve();
      register(kubelet);
    } catch (IOException | GrpcException e) {
      problem("cannot register " + resource + " with the kubelet at " + kubelet + ": " + e.getMessage());
      return;
    }
    kubeletSocketKey = key;
    registered = true;
    streamLost = false;
    lastProblem = "";
    LOG.infof("device plugin for %s registered with the kubelet (%s, %d GPUs)", resource, socket(), devices.all().size());
  }

  /** Sends the device list again to every kubelet watching (a GPU's health changed). */
  void devicesChanged() {
    var list = list().toByteArray();
    for (var watcher : watchers) {
      if (!watcher.send(list)) {
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

  private void serve() throws IOException {
    stopServer();
    int generation = ++this.generation;
    var service = "/" + VERSION + ".DevicePlugin/";
    server = GrpcServer.start(socket(), "device-plugin", Map.of(
        service + "GetDevicePluginOptions", request -> options().toByteArray(),
        service + "GetPreferredAllocation", request -> preferred(PreferredAllocationRequest.parseFrom(request)).toByteArray(),
        service + "Allocate", request -> allocate(AllocateRequest.parseFrom(request)).toByteArray(),
        service + "PreStartContainer", request -> PreStartContainerResponse.getDefaultInstance().toByteArray()),
        Map.of(service + "ListAndWatch", (request, stream) -> listAndWatch(generation, stream)));
  }

  private void register(Path kubelet) throws GrpcException {
    var request = RegisterRequest.newBuilder().setVersion(VERSION).setEndpoint(endpoint).setResourceName(resource)
        .setOptions(options()).build();
    // The kubelet answers only once it has connected back and asked for the options (it dials
    // with a 10 s timeout itself): allow as long. Waits for a kubelet that has made its socket but
    // does not listen on it yet.
    GrpcClient.call(kubelet, "/" + VERSION + ".Registration/Register", request.toByteArray(),
        Duration.ofMillis(Math.max(timeout.toMillis(), REGISTER_TIMEOUT.toMillis())), 1 << 16, true);
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

  private void listAndWatch(int generation, GrpcServer.Stream stream) {
    stream.onCancel(() -> {
      watchers.remove(stream);
      // The kubelet drops a plugin whose ListAndWatch ended (its devices go unhealthy, then away)
      // until it registers again: the next round does that. A stream of a server already replaced
      // (a kubelet restart) is not this registration's.
      if (generation == this.generation) {
        streamLost = true;
      }
    });
    watchers.add(stream);
    if (!stream.send(list().toByteArray())) {
      watchers.remove(stream);
    }
  }

  private PreferredAllocationResponse preferred(PreferredAllocationRequest request) {
    var out = PreferredAllocationResponse.newBuilder();
    for (var container : request.getContainerRequestsList()) {
      out.addContainerResponses(ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(
          handover.preferred(container.getAvailableDeviceIDsList(), container.getMustIncludeDeviceIDsList(), container.getAllocationSize())));
    }
    return out.build();
  }

  /**
   * The handover for each container; the kubelet records exactly these devices. An unknown device
   * fails the whole call (the kubelet then fails the container's admission and says why).
   */
  private AllocateResponse allocate(AllocateRequest request) throws GrpcException {
    var out = AllocateResponse.newBuilder();
    for (var container : request.getContainerRequestsList()) {
      for (var id : container.getDevicesIdsList()) {
        if (devices.byUuid(id).isEmpty()) {
          throw new GrpcException(GrpcException.INVALID_ARGUMENT, "unknown device " + id + " of " + resource);
        }
      }
      out.addContainerResponses(allocation(container.getDevicesIdsList()));
    }
    // The bookkeeping (and, queued, the pod's mark) once the kubelet has its answer, and before
    // any call it makes after that answer.
    GrpcServer.afterThisCall(() -> request.getContainerRequestsList().forEach(c -> handover.allocated(c.getDevicesIdsList())));
    return out.build();
  }

  private void stopServer() {
    watchers.forEach(GrpcServer.Stream::finish);
    watchers.clear();
    if (server != null) {
      server.close();
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
  }
}
