package io.gpuadmission.node;

import io.gpuadmission.node.deviceplugin.v1beta1.RegisterRequest;
import io.grpc.Server;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The node agent's device plugin for one resource ({@code aliyun.com/gpu}): the kubelet's device
 * plugin API v1beta1 ({@link DevicePluginService}) served by grpc-java on a Unix socket in the
 * kubelet's device-plugins directory, registered with the kubelet's {@code kubelet.sock} there
 * ({@link KubeletRegistration}). The kubelet's device manager (v1.32) answers a Register by
 * connecting to the socket, asking GetDevicePluginOptions and opening ListAndWatch; at each
 * container's admission it asks GetPreferredAllocation (the options say it is available), then
 * Allocate with the devices it keeps.
 *
 * <p>A kubelet restart empties the directory (its device manager removes every file but its
 * checkpoint) and makes a new {@code kubelet.sock}: {@link #ensureRegistered} (called when the
 * directory shows a new {@code kubelet.sock}, and every round) then serves a new socket and
 * registers again, as NVIDIA's plugin does.
 */
final class DevicePluginServer implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(DevicePluginServer.class);
  static final String VERSION = "v1beta1";
  static final String KUBELET_SOCKET = "kubelet.sock";

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
  /** The plugin's calls, one at a time in the order they come (what Allocate books, the next call sees). */
  private final ExecutorService calls;
  private volatile Server server;
  private volatile DevicePluginService service;
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
    this.calls = Executors.newSingleThreadExecutor(r -> {
      var thread = new Thread(r, "device-plugin " + resource);
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
   * Serves and registers when not yet done, when the plugin's socket is gone, when the kubelet's
   * ListAndWatch ended or when the kubelet's socket is a new one (a kubelet restart). Failures are
   * said once and retried on the next call.
   */
  synchronized void ensureRegistered() {
    var kubelet = dir.resolve(KUBELET_SOCKET);
    var key = fileKey(kubelet);
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
    var request = RegisterRequest.newBuilder().setVersion(VERSION).setEndpoint(endpoint).setResourceName(resource)
        .setOptions(DevicePluginService.options()).build();
    try {
      // The kubelet answers once it has dialled the plugin back (within 10 s of its own): allow as long.
      KubeletRegistration.register(kubelet, request, timeout.compareTo(KubeletRegistration.REGISTER) > 0 ? timeout
          : KubeletRegistration.REGISTER, this::serve);
    } catch (IOException e) {
      problem("cannot register " + resource + " with the kubelet at " + kubelet + ": " + e.getMessage());
      return;
    }
    kubeletSocketKey = key;
    registered = true;
    streamLost = false;
    lastProblem = "";
    LOG.infof("device plugin for %s registered with the kubelet (%s, %d GPUs)", resource, socket(), devices.all().size());
  }

  private static Object fileKey(Path file) {
    try {
      return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    } catch (IOException e) {
      return null;
    }
  }

  /** Sends the device list again to every kubelet watching (a GPU's health changed). */
  void devicesChanged() {
    var current = service;
    if (current != null) {
      current.devicesChanged();
    }
  }

  private void problem(String text) {
    if (!text.equals(lastProblem)) {
      LOG.warn(text + "; trying again when the kubelet's socket is new, and every round");
      lastProblem = text;
    }
  }

  /** A new server on the plugin's socket; the streams of the one before are not this registration's. */
  private void serve() throws IOException {
    int current = ++generation;
    stopServer();
    var fresh = new DevicePluginService(resource, devices, handover, how, () -> {
      if (current == generation) {
        streamLost = true;
      }
    });
    server = KubeletSockets.serve(socket(), fresh, calls);
    service = fresh;
  }

  private void stopServer() {
    if (service != null) {
      service.finish();
      service = null;
    }
    if (server != null) {
      // Closed before the next binds the same path: Netty deletes the socket file as it closes.
      server.shutdownNow();
      try {
        server.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      server = null;
    }
  }

  @Override
  public synchronized void close() {
    ++generation;
    stopServer();
    calls.shutdownNow();
    try {
      Files.deleteIfExists(socket());
    } catch (IOException ignored) {
      // the directory went with the kubelet
    }
  }
}
