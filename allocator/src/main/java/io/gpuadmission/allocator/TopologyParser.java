package io.gpuadmission.allocator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads the GPU block of {@code nvidia-smi topo -m}: header and legend lines, NIC rows and
 * columns, and the CPU/NUMA affinity columns are understood; the GPU x GPU cells become
 * {@link Link}s and the affinity becomes NUMA groups. Errors name the row and column.
 */
public final class TopologyParser {
  private static final Pattern GPU = Pattern.compile("GPU(\\d+)");
  private static final Pattern NVLINK = Pattern.compile("NV(\\d+)");

  private TopologyParser() {}

  /** Parses a complete matrix: every GPU row must be present. */
  public static LinkMatrix parse(String text) {
    return parse(text, false);
  }

  /**
   * With {@code completeAllToAll}, missing rows of a published excerpt are filled by symmetry and,
   * for pairs no row shows, with the link every shown pair has (an NVSwitch board); a matrix whose
   * shown pairs differ cannot be completed and is refused.
   */
  public static LinkMatrix parse(String text, boolean completeAllToAll) {
    List<String> header = null;
    var rows = new LinkedHashMap<Integer, String[]>();
    for (var raw : text.split("\\R")) {
      if (raw.isBlank() || raw.startsWith("#") || raw.startsWith("Legend") || raw.startsWith("  ")) {
        continue;
      }
      var cells = raw.split("\t");
      if (header == null && raw.startsWith("\t")) {
        header = List.of(cells).subList(1, cells.length).stream().map(String::trim).toList();
        continue;
      }
      var name = cells[0].trim();
      var gpu = GPU.matcher(name);
      if (gpu.matches()) {
        if (header == null) {
          throw new IllegalArgumentException("row " + name + " comes before the header line");
        }
        rows.put(Integer.parseInt(gpu.group(1)), cells);
      }
    }
    if (header == null) {
      throw new IllegalArgumentException("no header line (a tab followed by GPU0, GPU1, ...)");
    }
    var gpuColumns = new ArrayList<Integer>();
    for (int c = 0; c < header.size(); c++) {
      var m = GPU.matcher(header.get(c));
      if (m.matches()) {
        if (Integer.parseInt(m.group(1)) != gpuColumns.size()) {
          throw new IllegalArgumentException("header column " + header.get(c) + " is out of order");
        }
        gpuColumns.add(c);
      }
    }
    var n = gpuColumns.size();
    if (n == 0) {
      throw new IllegalArgumentException("the header names no GPU columns");
    }
    var numaColumn = header.indexOf("NUMA Affinity");
    var cpuColumn = header.indexOf("CPU Affinity");
    var links = new Link[n][n];
    var affinity = new String[n];
    for (var entry : rows.entrySet()) {
      var i = entry.getKey();
      if (i >= n) {
        throw new IllegalArgumentException("row GPU" + i + " has no column");
      }
      var cells = entry.getValue();
      for (int j = 0; j < n; j++) {
        var cell = cell(cells, gpuColumns.get(j), i, j);
        links[i][j] = i == j ? selfOrFail(cell, i) : link(cell, i, j);
      }
      var affinityColumn = numaColumn >= 0 ? numaColumn : cpuColumn;
      if (affinityColumn >= 0 && affinityColumn + 1 < cells.length) {
        var value = cells[affinityColumn + 1].trim();
        // "N/A", or "?" where a published excerpt was cut off: unknown.
        affinity[i] = value.isEmpty() || value.equals("N/A") || value.contains("?") ? null : value;
      }
    }
    if (rows.size() < n) {
      if (!completeAllToAll) {
        throw new IllegalArgumentException("the matrix has " + rows.size() + " GPU rows for " + n + " GPU columns");
      }
      complete(links, rows.keySet());
    }
    return LinkMatrix.of(links, groups(affinity));
  }

  private static String cell(String[] cells, int column, int i, int j) {
    if (column + 1 >= cells.length) {
      throw new IllegalArgumentException("row GPU" + i + " has no cell for GPU" + j);
    }
    return cells[column + 1].trim();
  }

  private static Link selfOrFail(String cell, int i) {
    if (!cell.equals("X")) {
      throw new IllegalArgumentException("GPU" + i + " to itself is \"" + cell + "\", expected X");
    }
    return new Link(0, PcieLevel.UNKNOWN);
  }

  private static Link link(String cell, int i, int j) {
    var nv = NVLINK.matcher(cell);
    if (nv.matches()) {
      return new Link(Integer.parseInt(nv.group(1)), PcieLevel.UNKNOWN);
    }
    return switch (cell) {
      case "PIX", "PSB" -> new Link(0, PcieLevel.PIX);
      case "PXB" -> new Link(0, PcieLevel.PXB);
      case "PHB" -> new Link(0, PcieLevel.PHB);
      case "NODE" -> new Link(0, PcieLevel.NODE);
      case "SYS", "SOC" -> new Link(0, PcieLevel.SYS);
      default -> throw new IllegalArgumentException("GPU" + i + " to GPU" + j + " is \"" + cell + "\": not a link type");
    };
  }

  private static void complete(Link[][] links, java.util.Set<Integer> present) {
    Link shown = null;
    for (var i : present) {
      for (int j = 0; j < links.length; j++) {
        if (i != j) {
          if (shown != null && !shown.equals(links[i][j])) {
            throw new IllegalArgumentException("rows are missing and the shown links differ (" + shown + ", " + links[i][j] + "): cannot complete");
          }
          shown = links[i][j];
        }
      }
    }
    for (int i = 0; i < links.length; i++) {
      for (int j = 0; j < links.length; j++) {
        if (links[i][j] == null) {
          links[i][j] = i == j ? new Link(0, PcieLevel.UNKNOWN) : links[j][i] != null ? links[j][i] : shown;
        }
      }
    }
  }

  private static int[] groups(String[] affinity) {
    Map<String, Integer> ids = new LinkedHashMap<>();
    var groups = new int[affinity.length];
    for (int i = 0; i < affinity.length; i++) {
      groups[i] = affinity[i] == null ? -1 : ids.computeIfAbsent(affinity[i], k -> ids.size());
    }
    return groups;
  }
}
