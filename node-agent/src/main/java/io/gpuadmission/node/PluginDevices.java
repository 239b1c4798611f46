package io.gpuadmission.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * The devices the plugin lists: one per GPU the NVIDIA driver's table ever showed, ID = its UUID,
 * topology = its NUMA node from sysfs ({@code /sys/bus/pci/devices/<PCI address>/numa_node}; none
 * when it says -1). Healthy while the driver lists it and the node's unhealthy-GPU ConfigMap does
 * not name its index; a GPU that leaves the driver's table stays listed, Unhealthy, so that the
 * kubelet takes it out of the allocatable count instead of losing track of it.
 */
final class PluginDevices {
  private static final Logger LOG = Logger.getLogger(PluginDevices.class);

  /** One device as the plugin lists it. */
  record Device(int index, String uuid, OptionalInt numa, boolean healthy) {}

  private final Path driverGpus;
  private final Path pciDevices;
  /** UUID to the last known index and NUMA node, in index order of first sight. */
  private final Map<String, Device> known = new LinkedHashMap<>();
  private Set<Integer> unhealthy = Set.of();
  private String lastProblem = "";

  PluginDevices(Path driverGpus, Path pciDevices) {
    this.driverGpus = driverGpus;
    this.pciDevices = pciDevices;
  }

  /** Reads the driver's table again; true when the list changed. */
  synchronized boolean refresh() {
    List<NvidiaDriverGpus.Gpu> present;
    try {
      present = NvidiaDriverGpus.list(driverGpus, new LinkedHashMap<>());
      lastProblem = "";
    } catch (IOException e) {
      if (!e.getMessage().equals(lastProblem)) {
        LOG.warnf("cannot read the NVIDIA driver's GPU list: %s; its GPUs are listed Unhealthy until it can", e.getMessage());
      }
      lastProblem = String.valueOf(e.getMessage());
      present = List.of();
    }
    var before = List.copyOf(known.values());
    var seen = new java.util.HashSet<String>();
    for (int i = 0; i < present.size(); i++) {
      var gpu = present.get(i);
      seen.add(gpu.uuid());
      known.put(gpu.uuid(), new Device(i, gpu.uuid(), numa(gpu.pciAddress()), !unhealthy.contains(i)));
    }
    for (var entry : known.entrySet()) {
      if (!seen.contains(entry.getKey()) && entry.getValue().healthy()) {
        var d = entry.getValue();
        LOG.warnf("GPU %d (%s) is no longer in the NVIDIA driver's table: listed Unhealthy", d.index(), d.uuid());
        entry.setValue(new Device(d.index(), d.uuid(), d.numa(), false));
      }
    }
    return !before.equals(List.copyOf(known.values()));
  }

  /** The GPUs the node's unhealthy-GPU ConfigMap names; true when the list changed. */
  synchronized boolean unhealthy(Set<Integer> gpus) {
    if (gpus.equals(unhealthy)) {
      return false;
    }
    unhealthy = Set.copyOf(gpus);
    refresh();
    return true;
  }

  synchronized List<Device> all() {
    return known.values().stream().sorted(java.util.Comparator.comparingInt(Device::index)).toList();
  }

  synchronized Optional<Device> byUuid(String uuid) {
    return Optional.ofNullable(known.get(uuid));
  }

  synchronized Optional<Device> byIndex(int index) {
    return known.values().stream().filter(d -> d.index() == index).findFirst();
  }

  /** NUMA nodes of the GPUs by index (0 where unknown), for a PCIe-only link matrix. */
  synchronized int[] numaByIndex() {
    var all = all();
    var out = new int[all.isEmpty() ? 0 : all.getLast().index() + 1];
    for (var d : all) {
      out[d.index()] = Math.max(0, d.numa().orElse(0));
    }
    return out;
  }

  private OptionalInt numa(String pciAddress) {
    var file = pciDevices.resolve(pciAddress).resolve("numa_node");
    try {
      if (!Files.isRegularFile(file)) {
        return OptionalInt.empty();
      }
      var node = Integer.parseInt(Files.readString(file).strip());
      return node < 0 ? OptionalInt.empty() : OptionalInt.of(node);
    } catch (IOException | NumberFormatException unreadable) {
      return OptionalInt.empty();
    }
  }

  static List<String> uuids(List<Device> devices) {
    var out = new ArrayList<String>();
    devices.forEach(d -> out.add(d.uuid()));
    return out;
  }
}
