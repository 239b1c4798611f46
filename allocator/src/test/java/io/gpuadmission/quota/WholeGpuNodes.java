package io.gpuadmission.quota;

import static io.gpuadmission.quota.QuotaTreeTest.gpu;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/** Pods running on nodes of eight whole GPUs, as the reclaim planner's tests set them up. */
final class WholeGpuNodes {
  static final int GPUS_PER_NODE = 8;

  private final List<RunningPod> running = new ArrayList<>();

  QuotaPod run(String uid, String namespace, long gpus, int priority, long start, String node) {
    return add(new QuotaPod(uid, namespace, gpu(gpus), priority, start, Optional.empty()), node);
  }

  QuotaPod runGang(String uid, String namespace, long gpus, String gang, String node) {
    return add(new QuotaPod(uid, namespace, gpu(gpus), 0, 0, Optional.of(gang)), node);
  }

  List<RunningPod> running() {
    return running;
  }

  QuotaBook book(QuotaTree tree) {
    return QuotaBook.of(tree, running.stream().map(RunningPod::pod).toList());
  }

  /** Room as whole GPUs count it: the pod fits when the node's free GPUs cover its ask; each set asked about goes to {@code asked}. */
  RoomCheck room(long ask, Consumer<Set<String>> asked) {
    return (node, uids) -> {
      asked.accept(uids);
      var used = running.stream()
          .filter(pod -> pod.node().equals(node) && !uids.contains(pod.pod().uid()))
          .mapToLong(pod -> pod.pod().ask().get("nvidia.com/gpu"))
          .sum();
      return GPUS_PER_NODE - used >= ask;
    };
  }

  private QuotaPod add(QuotaPod pod, String node) {
    running.add(new RunningPod(pod, node));
    return pod;
  }
}
