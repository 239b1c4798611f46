package io.gpuadmission.allocator;

import java.util.ArrayList;
import java.util.Optional;

/** Builds test nodes. */
final class Nodes {
  private Nodes() {}

  static NodeGpus withUsed(LinkMatrix links, boolean[] used) {
    var gpus = new ArrayList<GpuDevice>();
    for (int i = 0; i < links.size(); i++) {
      gpus.add(new GpuDevice(i, "test", 16, used[i] ? 16 : 0, true));
    }
    return NodeGpus.withoutCpu("node", gpus, Optional.of(links));
  }

  static boolean[] mask(int n, int bits) {
    var used = new boolean[n];
    for (int i = 0; i < n; i++) {
      used[i] = (bits >> i & 1) == 1;
    }
    return used;
  }
}
