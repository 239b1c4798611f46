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
import io.gpuadmission.node.deviceplugin.v1beta1.TopologyInfo;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The device plugin API v1beta1 for one resource, as the kubelet's device manager calls it: the
 * options (GetPreferredAllocation available), the device list on ListAndWatch (sent again when a
 * GPU's health changes), bind's choice on GetPreferredAllocation and the handover on Allocate.
 * One instance per served socket; {@code streamLost} runs when the kubelet's ListAndWatch on it
 * ends (the kubelet then no longer lists the plugin's devices).
 */
final class DevicePluginService extends DevicePluginGrpc.DevicePluginImplBase {
  static final String HEALTHY = "Healthy";
  static final String UNHEALTHY = "Unhealthy";

  private final String resource;
  private final PluginDevices devices;
  private final GpuHandover handover;
  private final DevicePluginServer.Handover how;
  private final Runnable streamLost;
  private final List<ServerCallStreamObserver<ListAndWatchResponse>> watchers = new CopyOnWriteArrayList<>();

  DevicePluginService(String resource, PluginDevices devices, GpuHandover handover, DevicePluginServer.Handover how, Runnable streamLost) {
    this.resource = resource;
    this.devices = devices;
    this.handover = handover;
    this.how = how;
    this.streamLost = streamLost;
  }

  static DevicePluginOptions options() {
    return DevicePluginOptions.newBuilder().setGetPreferredAllocationAvailable(true).build();
  }

  @Override
  public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> response) {
    response.onNext(options());
    response.onCompleted();
  }

  @Override
  public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> response) {
    var stream = (ServerCallStreamObserver<ListAndWatchResponse>) response;
    stream.setOnCancelHandler(() -> {
      watchers.remove(stream);
      // The kubelet drops a plugin whose ListAndWatch ended (its devices go unhealthy, then away)
      // until it registers again.
      streamLost.run();
    });
    watchers.add(stream);
    send(stream, list());
  }

  /** Sends the device list again to every kubelet watching (a GPU's health changed). */
  void devicesChanged() {
    var list = list();
    watchers.forEach(stream -> send(stream, list));
  }

  /** Ends every open ListAndWatch (the server is being replaced). */
  void finish() {
    for (var stream : watchers) {
      watchers.remove(stream);
      synchronized (stream) {
        if (!stream.isCancelled()) {
          stream.onCompleted();
        }
      }
    }
  }

  // A stream's messages come from the calls thread and from whoever saw a health change: one at a time.
  private static void send(ServerCallStreamObserver<ListAndWatchResponse> stream, ListAndWatchResponse list) {
    synchronized (stream) {
      if (!stream.isCancelled()) {
        stream.onNext(list);
      }
    }
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

  /**
   * The handover for each container; the kubelet records exactly these devices. An unknown device
   * fails the whole call (the kubelet then fails the container's admission and says why).
   */
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
    // The bookkeeping (and, queued, the pod's mark) once the answer is on its way, and before any
    // call the kubelet makes after it: the server runs its calls one at a time on one thread.
    request.getContainerRequestsList().forEach(c -> handover.allocated(c.getDevicesIdsList()));
  }

  private ContainerAllocateResponse allocation(List<String> ids) {
    var sorted = new ArrayList<String>(ids);
    sorted.sort(Comparator.comparingInt(id -> devices.byUuid(id).map(PluginDevices.Device::index).orElse(Integer.MAX_VALUE)));
    var out = ContainerAllocateResponse.newBuilder();
    if (how == DevicePluginServer.Handover.CDI) {
      sorted.forEach(id -> out.addCdiDevices(CDIDevice.newBuilder().setName("nvidia.com/gpu=" + id)));
    } else {
      out.putEnvs("NVIDIA_VISIBLE_DEVICES", String.join(",", sorted));
    }
    return out.build();
  }

  @Override
  public void preStartContainer(PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> response) {
    response.onNext(PreStartContainerResponse.getDefaultInstance());
    response.onCompleted();
  }
}
