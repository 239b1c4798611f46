package io.gpuadmission.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Device IDs to the allocator's GPU indices, from the NVIDIA driver's table of a DGX-1 (fixture). */
class DeviceIndexTest {
  static final Path DGX1 = Path.of("src/test/resources/node/nvidia-gpus");

  @Test
  void numbersGpusInPciBusOrderNotByTheirDeviceMinor() throws Exception {
    var skipped = new LinkedHashMap<String, String>();

    var table = NvidiaDriverGpus.indexByUuid(DGX1, skipped);

    // 0000:0a:00.0 is /dev/nvidia0 (Device Minor 0) but the third GPU on the bus: index 2.
    assertThat(table).isEqualTo(Map.of(
        "GPU-1f0c7a34-5b6e-2d8c-9e41-7a3b5c6d8e90", 0,
        "GPU-8d2e4f61-0a3b-4c5d-8e7f-1a2b3c4d5e6f", 1,
        "GPU-c4b5a697-8870-4f61-b2a3-d4c5e6f70819", 2,
        "GPU-27e1d3c5-b7a9-4e8f-9d0c-3b5a7c9e1f20", 3,
        "GPU-5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d", 4,
        "GPU-e0f1a2b3-c4d5-4e6f-9a0b-1c2d3e4f5a6b", 5,
        "GPU-93a4b5c6-d7e8-4f90-a1b2-c3d4e5f6a7b8", 6,
        "GPU-6c7d8e9f-a0b1-4c2d-be3f-4a5b6c7d8e9f", 7));
    assertThat(skipped).isEmpty();
  }

  @Test
  void readsEveryFormOfDeviceIdNvidiasPluginWrites() {
    var index = DeviceIndex.fromDriver(DGX1, Clock.systemUTC());

    assertThat(index.indexOf("GPU-c4b5a697-8870-4f61-b2a3-d4c5e6f70819")).isEqualTo(OptionalInt.of(2));
    // Time-slicing replicas of one GPU: <uuid>::<replica>.
    assertThat(index.indexOf("GPU-27e1d3c5-b7a9-4e8f-9d0c-3b5a7c9e1f20::3")).isEqualTo(OptionalInt.of(3));
    // deviceIDStrategy: index.
    assertThat(index.indexOf("6")).isEqualTo(OptionalInt.of(6));
    assertThat(index.indexOf("MIG-4d5e6f70-8192-5a3b-9c4d-5e6f7a8b9c0d")).isEmpty();
    assertThat(index.indexOf("0:1")).isEmpty();
    assertThat(index.indexOf("GPU-00000000-0000-0000-0000-000000000000")).isEmpty();
    assertThat(index.knownGpus()).isEqualTo(8);
  }

  @Test
  void readsTheDriversTableAgainForAnUnknownUuidAtMostOnceAMinute() {
    var reads = new AtomicInteger();
    var now = new Instant[] {Instant.parse("2026-03-01T10:00:00Z")};
    var clock = new Clock() {
      @Override
      public Instant instant() {
        return now[0];
      }

      @Override
      public java.time.ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(java.time.ZoneId zone) {
        return this;
      }
    };
    var late = "GPU-93a4b5c6-d7e8-4f90-a1b2-c3d4e5f6a7b8";
    var index = new DeviceIndex(skipped -> reads.incrementAndGet() < 3 ? Map.of() : Map.of(late, 6), clock);

    assertThat(index.indexOf(late)).isEmpty();
    now[0] = now[0].plus(Duration.ofSeconds(59));
    assertThat(index.indexOf(late)).isEmpty();
    assertThat(reads).hasValue(1);
    now[0] = now[0].plus(Duration.ofSeconds(1));
    assertThat(index.indexOf(late)).isEmpty();
    assertThat(reads).hasValue(2);
    now[0] = now[0].plus(DeviceIndex.REREAD);
    assertThat(index.indexOf(late)).isEqualTo(OptionalInt.of(6));
    assertThat(reads).hasValue(3);
  }

  @Test
  void skipsEntriesThatAreNoGpuOfTheDriverAndSaysWhich(@TempDir Path dir) throws Exception {
    Files.createDirectories(dir.resolve("0000:3b:00.0"));
    Files.writeString(dir.resolve("0000:3b:00.0/information"), "Model: \t\t Tesla T4\nGPU UUID: \t GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d\n");
    Files.createDirectories(dir.resolve("0000:1a:00.0"));
    Files.writeString(dir.resolve("0000:1a:00.0/information"), "Model: \t\t Tesla T4\n");
    Files.createDirectories(dir.resolve("lost+found"));
    var skipped = new LinkedHashMap<String, String>();

    assertThat(NvidiaDriverGpus.indexByUuid(dir, skipped)).isEqualTo(Map.of("GPU-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", 0));
    assertThat(skipped).containsExactly(
        Map.entry("0000:1a:00.0", "no \"GPU UUID:\" line in its information file"), Map.entry("lost+found", "not a PCI address"));
    assertThat(NvidiaDriverGpus.indexByUuid(dir.resolve("no-driver"), skipped)).isEmpty();
  }
}
