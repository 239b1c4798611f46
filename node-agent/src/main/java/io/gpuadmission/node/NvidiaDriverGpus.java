package io.gpuadmission.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The node's NVIDIA GPUs as the driver lists them, without NVML: one directory per GPU under
 * {@code /proc/driver/nvidia/gpus/}, named by its PCI address, whose {@code information} file
 * holds {@code GPU UUID: GPU-...}. A GPU's index is its rank in PCI bus order: the order NVML and
 * nvidia-smi enumerate in, and so the numbering of {@code nvidia-smi topo -m}, gpushare's {@code
 * ALIYUN_COM_GPU_MEM_IDX} and the allocator. The file's {@code Device Minor} (the N of {@code
 * /dev/nvidiaN}) is not used: it can differ from that order.
 */
public final class NvidiaDriverGpus {
  /** {@code domain:bus:device.function}, hexadecimal, as the directory names and lspci write it. */
  private static final Pattern PCI_ADDRESS = Pattern.compile("(\\p{XDigit}{1,8}):(\\p{XDigit}{1,2}):(\\p{XDigit}{1,2})\\.(\\p{XDigit})");
  private static final String UUID_KEY = "GPU UUID:";

  private NvidiaDriverGpus() {}

  /** A GPU of the node: its PCI address (lower case) and UUID. */
  record Gpu(String pciAddress, long pciOrder, String uuid) {}

  /**
   * UUID to index for every GPU the driver lists under {@code gpusDir}; empty when the directory
   * does not exist (no NVIDIA driver loaded, or {@code /proc} not the host's). A directory whose
   * name is no PCI address or whose file has no UUID is skipped and named in {@code skipped}.
   */
  public static Map<String, Integer> indexByUuid(Path gpusDir, Map<String, String> skipped) throws IOException {
    var gpus = list(gpusDir, skipped);
    var out = new HashMap<String, Integer>();
    for (int i = 0; i < gpus.size(); i++) {
      out.put(gpus.get(i).uuid(), i);
    }
    return Map.copyOf(out);
  }

  /** The GPUs the driver lists under {@code gpusDir}, in PCI bus order (their index is their rank). */
  static List<Gpu> list(Path gpusDir, Map<String, String> skipped) throws IOException {
    if (!Files.isDirectory(gpusDir)) {
      return List.of();
    }
    var gpus = new ArrayList<Gpu>();
    try (var entries = Files.list(gpusDir)) {
      for (var dir : entries.sorted().toList()) {
        var name = dir.getFileName().toString().toLowerCase(Locale.ROOT);
        var address = PCI_ADDRESS.matcher(name);
        if (!address.matches()) {
          skipped.put(name, "not a PCI address");
          continue;
        }
        var uuid = uuid(dir.resolve("information"));
        if (uuid.isEmpty()) {
          skipped.put(name, "no \"" + UUID_KEY + "\" line in its information file");
          continue;
        }
        var order = (Long.parseLong(address.group(1), 16) << 16)
            | (Long.parseLong(address.group(2), 16) << 8)
            | (Long.parseLong(address.group(3), 16) << 3)
            | Long.parseLong(address.group(4), 16);
        gpus.add(new Gpu(name, order, uuid.get()));
      }
    }
    gpus.sort(Comparator.comparingLong(Gpu::pciOrder));
    return List.copyOf(gpus);
  }

  private static Optional<String> uuid(Path information) throws IOException {
    if (!Files.isRegularFile(information)) {
      return Optional.empty();
    }
    for (var line : Files.readAllLines(information)) {
      var trimmed = line.strip();
      if (trimmed.startsWith(UUID_KEY)) {
        var value = trimmed.substring(UUID_KEY.length()).strip();
        return value.isEmpty() ? Optional.empty() : Optional.of(value);
      }
    }
    return Optional.empty();
  }
}
