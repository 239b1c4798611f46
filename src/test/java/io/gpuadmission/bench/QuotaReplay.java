package io.gpuadmission.bench;

import io.gpuadmission.allocator.Task;
import io.gpuadmission.quota.QuotaResources;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Replays the Alibaba GPU trace with departures, three teams of unequal demand sharing the cluster
 * ({@link ReplayTeams}), in three modes: no quota, a fixed ResourceQuota-like cap at each team's
 * min, and the elastic tree (borrowing up to max, fair shares, reclaim for a min). Each GPU pod of
 * the trace arrives at its {@code creation_time} divided by the speed-up (the trace spans 149 days
 * and never fills its cluster; compressed, it does) and holds its GPUs for {@code deletion_time -
 * creation_time}, uncompressed; CPU-only pods hold no GPU and are left out, and the GPU pods'
 * CPU is not counted (quotas here are of GPUs). A pod that cannot go
 * yet waits; pending pods are tried in arrival order whenever a pod leaves (a pod that arrives is
 * tried at once), none blocking the others, as kube-scheduler retries unschedulable pods. Nodes are
 * chosen by the allocator's best-fit policy (the trace simulator's baseline path). A reclaimed pod
 * restarts: it waits again, from the eviction, for its whole duration.
 *
 * <p>Usage: {@code QuotaReplay --nodes FILE --pods FILE [--speedup 400] [--sample NODE_STEP,POD_STEP]}.
 */
public final class QuotaReplay {
  /** A GPU pod of the trace: its team, its task, what it counts against quota, when it comes, how long it runs (ms). */
  record ReplayPod(String name, String team, Task task, QuotaResources ask, int priority, long arrivalMillis, long durationMillis) {}

  private QuotaReplay() {}

  /** The GPU pods of {@code file}, in the order of the file, arrivals divided by {@code speedup}. */
  static List<ReplayPod> readPods(Path file, double speedup) throws IOException {
    var traced = TraceSimulator.readTrace(file);
    var lines = Files.readAllLines(file);
    var header = Arrays.asList(lines.get(0).split(","));
    var created = header.indexOf("creation_time");
    var deleted = header.indexOf("deletion_time");
    var qos = header.indexOf("qos");
    if (created < 0 || deleted < 0) {
      throw new IllegalArgumentException(file + " has no creation_time and deletion_time (the default pod list has)");
    }
    var pods = new ArrayList<ReplayPod>();
    for (var i = 0; i < traced.size(); i++) {
      var cells = lines.get(i + 1).split(",", -1);
      var trace = traced.get(i);
      if (trace.task().gpus() == 0) {
        continue;
      }
      var start = Long.parseLong(cells[created]);
      var duration = Math.max(1, Long.parseLong(cells[deleted]) - start) * 1000;
      var task = trace.task();
      var gpusOnly = new Task(task.kind(), 0, task.gpus(), task.perGpu(), task.models());
      pods.add(new ReplayPod(
          trace.name(), ReplayTeams.teamOf(trace.name()), gpusOnly, ReplayTeams.ask(gpusOnly),
          priority(qos < 0 ? "" : cells[qos]), Math.round(start * 1000 / speedup), duration));
    }
    return pods;
  }

  /** Latency-sensitive pods above burstable ones above best-effort ones, as a cluster's PriorityClasses would put them. */
  private static int priority(String qos) {
    return switch (qos) {
      case "LS", "Guaranteed" -> 1000;
      case "Burstable" -> 500;
      default -> 0;
    };
  }

  public static void main(String[] args) throws IOException {
    String nodes = null;
    String pods = null;
    var speedup = 400.0;
    String sample = null;
    for (var i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--nodes" -> nodes = args[i + 1];
        case "--pods" -> pods = args[i + 1];
        case "--speedup" -> speedup = Double.parseDouble(args[i + 1]);
        case "--sample" -> sample = args[i + 1];
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (nodes == null || pods == null) {
      System.err.println("usage: --nodes FILE --pods FILE [--speedup 400] [--sample NODE_STEP,POD_STEP]");
      System.exit(2);
    }
    var traceNodes = TraceSimulator.readNodes(Path.of(nodes));
    var replayPods = readPods(Path.of(pods), speedup);
    if (sample != null) {
      var steps = sample.split(",");
      traceNodes = every(sortedNodes(traceNodes), Integer.parseInt(steps[0]));
      replayPods = every(replayPods, Integer.parseInt(steps[1]));
    }
    var gpus = traceNodes.stream().mapToLong(TraceSimulator.TraceNode::gpus).sum();
    System.out.printf("nodes=%d gpus=%d pods=%d speedup=%.0f teams=%s%n", traceNodes.size(), gpus, replayPods.size(), speedup, teams(replayPods));
    var reports = new ArrayList<QuotaReplayRun.Report>();
    for (var mode : QuotaReplayRun.Mode.values()) {
      var started = System.nanoTime();
      var report = new QuotaReplayRun(mode, traceNodes, replayPods).run();
      reports.add(report);
      System.out.print(report.describe());
      System.out.printf("  seconds=%.1f%n", (System.nanoTime() - started) / 1e9);
    }
    var none = reports.get(0).allocationRatio();
    var fixed = reports.get(1).allocationRatio();
    var elastic = reports.get(2).allocationRatio();
    System.out.printf("elastic/no-quota=%.3f elastic/fixed-min=%.3f%n", elastic / none, elastic / fixed);
  }

  static List<TraceSimulator.TraceNode> sortedNodes(List<TraceSimulator.TraceNode> nodes) {
    var sorted = new ArrayList<>(nodes);
    sorted.sort(java.util.Comparator.comparing(TraceSimulator.TraceNode::model)
        .thenComparingInt(TraceSimulator.TraceNode::gpus).thenComparing(TraceSimulator.TraceNode::name));
    return sorted;
  }

  static <T> List<T> every(List<T> items, int step) {
    var out = new ArrayList<T>();
    for (var i = 0; i < items.size(); i += step) {
      out.add(items.get(i));
    }
    return out;
  }

  private static String teams(List<ReplayPod> pods) {
    var demand = new java.util.TreeMap<String, Long>();
    for (var pod : pods) {
      demand.merge(pod.team(), pod.task().gpus() * pod.task().takes(TraceSimulator.GPU) * (pod.durationMillis() / 1000), Long::sum);
    }
    var total = demand.values().stream().mapToLong(Long::longValue).sum();
    var text = new StringBuilder();
    for (Map.Entry<String, Long> entry : demand.entrySet()) {
      text.append(text.isEmpty() ? "" : ",").append(entry.getKey()).append(':')
          .append(Math.round(100.0 * entry.getValue() / total)).append("%gpu-time");
    }
    return text.toString();
  }
}
