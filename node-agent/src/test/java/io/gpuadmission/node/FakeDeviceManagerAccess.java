package io.gpuadmission.node;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.node.podresources.v1.PodResources;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The fake device manager and the plugin's settings for it, for tests and benchmarks outside this package. */
public final class FakeDeviceManagerAccess implements AutoCloseable {
  private final FakeDeviceManager kubelet;
  private final Path dir;

  public FakeDeviceManagerAccess(Path dir) {
    this.dir = dir;
    this.kubelet = new FakeDeviceManager(dir, "aliyun.com/gpu");
  }

  public DevicePlugin.Settings pluginSettings(Path driverGpus) {
    return new DevicePlugin.Settings(dir, List.of("aliyun.com/gpu"), DevicePluginServer.Handover.ENV, driverGpus, dir.resolve("no-sysfs"),
        Optional.empty(), Set.of("aliyun.com/gpu"), Duration.ofSeconds(3), Duration.ofSeconds(1));
  }

  /** Registrations the kubelet accepted, and the devices the plugin lists. */
  public int registrations() {
    return kubelet.registrations().size();
  }

  public int devices() {
    return kubelet.devices().size();
  }

  /** Admits the pod as the v1.32 device manager does (GetPreferredAllocation, then Allocate, per container). */
  public Map<String, List<String>> admit(Pod pod) {
    return kubelet.admit(pod);
  }

  /** NVIDIA_VISIBLE_DEVICES of the container's Allocate answer. */
  public String visible(String podKey, String container) {
    return kubelet.response(podKey, container).getEnvsOrThrow("NVIDIA_VISIBLE_DEVICES");
  }

  /** The pod's containers ended: their devices are free. */
  public void remove(String podKey) {
    kubelet.remove(podKey);
  }

  /** What the kubelet's PodResources List says of the devices it handed out. */
  public PodResources[] podResources() {
    return kubelet.podResources();
  }

  /** A timed GetDevicePluginOptions on the connection the kubelet allocates on; nanoseconds. */
  public long options() {
    return kubelet.options().nanos();
  }

  /** Nanoseconds of each call named {@code call} so far (GetPreferredAllocation, Allocate, GetDevicePluginOptions). */
  public List<Long> timings(String call) {
    return kubelet.timings.stream().filter(t -> t.call().equals(call)).map(FakeDeviceManager.Timed::nanos).toList();
  }

  public void clearTimings() {
    kubelet.timings.clear();
  }

  @Override
  public void close() {
    kubelet.close();
  }
}
