package io.gpuadmission.node;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** The fake device manager and the plugin's settings for it, for tests outside this package. */
public final class FakeDeviceManagerAccess implements AutoCloseable {
  private final FakeDeviceManager kubelet;
  private final Path dir;

  public FakeDeviceManagerAccess(Path dir) {
    this.dir = dir;
    this.kubelet = new FakeDeviceManager(dir, "aliyun.com/gpu");
  }

  public DevicePlugin.Settings pluginSettings(Path driverGpus) {
    return new DevicePlugin.Settings(dir, List.of("aliyun.com/gpu"), DevicePluginServer.Handover.ENV, driverGpus, dir.resolve("no-sysfs"),
        Optional.empty(), Set.of("aliyun.com/gpu"), Duration.ofSeconds(3));
  }

  @Override
  public void close() {
    kubelet.close();
  }
}
