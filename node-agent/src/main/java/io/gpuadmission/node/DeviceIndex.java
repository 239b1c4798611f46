package io.gpuadmission.node;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalInt;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/**
 * Turns the device IDs a device plugin gave the kubelet into the GPU indices the allocator uses:
 *
 * <ul>
 *   <li>{@code GPU-<uuid>}: NVIDIA's device plugin with its default {@code deviceIDStrategy: uuid}
 *       (and ACK's, which follow it); looked up in the driver's table ({@link NvidiaDriverGpus}).
 *       A time-sliced replica {@code GPU-<uuid>::<n>} is that GPU.
 *   <li>a plain number {@code 3}: NVIDIA's plugin with {@code deviceIDStrategy: index}, whose IDs
 *       are NVML indices already.
 *   <li>anything else ({@code MIG-<uuid>}, a MIG index {@code 0:1}, a UUID the driver does not
 *       list): no index. The caller says so once per ID and skips it.
 * </ul>
 *
 * The driver's table is read at start and again when a UUID is not in it (a GPU the driver
 * listed late), at most once a minute.
 */
public final class DeviceIndex {
  private static final Logger LOG = Logger.getLogger(DeviceIndex.class);
  private static final Pattern NUMBER = Pattern.compile("\\d{1,4}");
  private static final String REPLICA = "::";
  static final Duration REREAD = Duration.ofMinutes(1);

  private final Function<Map<String, String>, Map<String, Integer>> table;
  private final Clock clock;
  private final java.util.Set<String> said = new java.util.HashSet<>();
  private Map<String, Integer> byUuid;
  private Instant readAt;

  /** Reads the driver's table under {@code gpusDir} ({@code /proc/driver/nvidia/gpus}). */
  public static DeviceIndex fromDriver(Path gpusDir, Clock clock) {
    return new DeviceIndex(skipped -> {
      try {
        return NvidiaDriverGpus.indexByUuid(gpusDir, skipped);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, clock);
  }

  DeviceIndex(Function<Map<String, String>, Map<String, Integer>> table, Clock clock) {
    this.table = table;
    this.clock = clock;
    read();
  }

  /** The allocator's index of the GPU behind {@code deviceId}; empty when it has none. */
  public synchronized OptionalInt indexOf(String deviceId) {
    var id = deviceId.strip();
    var replica = id.indexOf(REPLICA);
    if (replica > 0) {
      id = id.substring(0, replica);
    }
    if (NUMBER.matcher(id).matches()) {
      return OptionalInt.of(Integer.parseInt(id));
    }
    if (!id.startsWith("GPU-")) {
      return OptionalInt.empty();
    }
    var index = byUuid.get(id);
    if (index == null && !clock.instant().isBefore(readAt.plus(REREAD))) {
      read();
      index = byUuid.get(id);
    }
    return index == null ? OptionalInt.empty() : OptionalInt.of(index);
  }

  /** How many GPUs the driver's table holds now. */
  public synchronized int knownGpus() {
    return byUuid.size();
  }

  private void read() {
    readAt = clock.instant();
    var skipped = new LinkedHashMap<String, String>();
    try {
      byUuid = table.apply(skipped);
    } catch (UncheckedIOException e) {
      var problem = e.getCause().getMessage();
      if (said.add(problem)) {
        LOG.warnf("cannot read the NVIDIA driver's GPU list: %s; GPU UUIDs stay unmapped until it can be read", problem);
      }
      byUuid = Map.of();
      return;
    }
    skipped.forEach((dir, why) -> {
      if (said.add(dir)) {
        LOG.warnf("NVIDIA driver GPU entry %s skipped: %s", dir, why);
      }
    });
  }
}
