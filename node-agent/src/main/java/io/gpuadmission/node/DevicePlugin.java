package io.gpuadmission.node;

import io.gpuadmission.allocator.LinkMatrix;
import io.gpuadmission.node.api.ApiException;
import io.gpuadmission.node.api.ApiServer;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jboss.logging.Logger;

/**
 * The node agent's device plugin: for each served resource a {@link DevicePluginServer}, all on
 * one device table ({@link PluginDevices}) and one record of what was handed out ({@link
 * GpuHandover}). It registers at start, again whenever the kubelet's socket is new (a thread
 * watches the directory; every round of the agent checks too), lists a GPU Unhealthy when the
 * driver loses it or the node's unhealthy-GPU ConfigMap names it, and learns each round from the
 * kubelet's PodResources answer what every pod holds.
 */
public final class DevicePlugin implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(DevicePlugin.class);

  /** Where and what to serve. */
  public record Settings(Path dir, List<String> resources, DevicePluginServer.Handover handover, Path driverGpus, Path pciDevices,
      Optional<LinkMatrix> links, Set<String> wholeResources, Duration timeout, Duration cacheLag) {
    public Settings {
      if (resources.contains("nvidia.com/gpu")) {
        throw new IllegalArgumentException("the device plugin does not serve nvidia.com/gpu: NVIDIA's device plugin owns it; serve aliyun.com/gpu");
      }
      resources = List.copyOf(resources);
      wholeResources = Set.copyOf(wholeResources);
    }
  }

  private final PluginDevices devices;
  private final List<DevicePluginServer> servers = new ArrayList<>();
  private final List<GpuHandover> handovers = new ArrayList<>();
  private final ExecutorService writer;
  private final NodeUnhealthyGpus unhealthy;
  private final Thread watcher;
  private final WatchService watch;

  DevicePlugin(ApiServer api, NodePods pods, AllocationRecorder recorder, String node, Settings settings) {
    devices = new PluginDevices(settings.driverGpus(), settings.pciDevices());
    devices.refresh();
    writer = Executors.newSingleThreadExecutor(r -> {
      var thread = new Thread(r, "gpu-assigned");
      thread.setDaemon(true);
      return thread;
    });
    java.util.function.Supplier<LinkMatrix> links = () -> settings.links().filter(l -> l.size() >= devices.numaByIndex().length)
        .orElseGet(() -> LinkMatrix.pcieOnly(devices.numaByIndex()));
    for (var resource : settings.resources()) {
      var handover = new GpuHandover(pods, node, devices, resource, settings.wholeResources(), links, recorder, writer, settings.cacheLag());
      handovers.add(handover);
      servers.add(new DevicePluginServer(settings.dir(), resource, devices, handover, settings.handover(), settings.timeout()));
    }
    unhealthy = NodeUnhealthyGpus.start(api, node, NodeAgent.WATCH_BACKOFF, gpus -> {
      if (devices.unhealthy(gpus)) {
        servers.forEach(DevicePluginServer::devicesChanged);
      }
    });
    WatchService w = null;
    try {
      w = FileSystems.getDefault().newWatchService();
      settings.dir().register(w, StandardWatchEventKinds.ENTRY_CREATE);
    } catch (IOException | RuntimeException e) {
      LOG.warnf("cannot watch %s (%s): a kubelet restart is noticed by the next round instead", settings.dir(), e.getMessage());
    }
    watch = w;
    watcher = new Thread(this::watchKubelet, "device-plugin-watch");
    watcher.setDaemon(true);
    if (watch != null) {
      watcher.start();
    }
    servers.forEach(DevicePluginServer::ensureRegistered);
  }

  static final String TOPOLOGY_LABEL = "ack.node.gpu.schedule";
  static final String TOPOLOGY_VALUE = "topology";

  /** Whether the node carries ACK's topology label (read once at start: relabelling takes effect when the agent restarts). */
  public static boolean topologyNode(ApiServer api, String node) {
    try {
      var found = api.get("/api/v1/nodes/" + node);
      return TOPOLOGY_VALUE.equals(found.path("metadata").path("labels").path(TOPOLOGY_LABEL).asText(null));
    } catch (ApiException e) {
      if (e.code() == 404) {
        return false;
      }
      throw new ApiException(e.code(), "cannot read Node " + node + ": " + e.getMessage());
    }
  }

  /** Each agent round: register again if needed, re-read the driver's table, learn what the kubelet says pods hold. */
  void round(Optional<Map<String, PodGpus>> held) {
    if (devices.refresh()) {
      servers.forEach(DevicePluginServer::devicesChanged);
    }
    servers.forEach(DevicePluginServer::ensureRegistered);
    held.ifPresent(h -> handovers.forEach(x -> x.kubeletHolds(h)));
  }

  /** Whether every served resource is registered with the kubelet. */
  public boolean registered() {
    return servers.stream().allMatch(DevicePluginServer::registered);
  }

  List<DevicePluginServer> servers() {
    return List.copyOf(servers);
  }

  private void watchKubelet() {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        var key = watch.take();
        var kubelet = key.pollEvents().stream().anyMatch(e -> DevicePluginServer.KUBELET_SOCKET.equals(String.valueOf(e.context())));
        key.reset();
        if (kubelet) {
          servers.forEach(DevicePluginServer::ensureRegistered);
        }
      } catch (InterruptedException | java.nio.file.ClosedWatchServiceException e) {
        return;
      } catch (RuntimeException e) {
        LOG.errorf(e, "device plugin: registering again failed");
      }
    }
  }

  @Override
  public void close() {
    watcher.interrupt();
    if (watch != null) {
      try {
        watch.close();
      } catch (IOException ignored) {
        // closing
      }
    }
    unhealthy.close();
    servers.forEach(DevicePluginServer::close);
    writer.shutdownNow();
  }
}
