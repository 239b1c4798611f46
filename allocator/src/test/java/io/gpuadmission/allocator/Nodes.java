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

  /** Two DGX-1 boards of 8 V100s in one 16-GPU node: NVLink within a board, SYS between them. */
  static LinkMatrix twoDgx1Boards() {
    var one = LinkMatrix.dgx1V100();
    var links = new Link[16][16];
    var numa = new int[16];
    for (int i = 0; i < 16; i++) {
      numa[i] = i / 4;
      for (int j = 0; j < 16; j++) {
        links[i][j] = i / 8 == j / 8 ? one.link(i % 8, j % 8) : new Link(0, PcieLevel.SYS);
      }
    }
    return LinkMatrix.of(links, numa);
  }
}
