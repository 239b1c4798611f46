package io.gpuadmission.validation;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterView;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import java.util.ArrayList;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

class RecentAdmissionsTest {
  private final AtomicLong now = new AtomicLong();

  private static Pod member(String name, int gpus) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("mutation/pytorch-dist-nccl-worker/expected.yaml")), Pod.class);
    pod.getMetadata().setName(name);
    pod.getSpec().getContainers().get(0).getResources().getLimits().put("aliyun.com/gpu", new io.fabric8.kubernetes.api.model.Quantity(String.valueOf(gpus)));
    return pod;
  }

  private static PodSubject subject(Pod pod) {
    return new PodSubject(pod, "default", PolicyParser.builtInDefault(), ClusterView.EMPTY, "pod");
  }

  @RepeatedTest(20)
  void concurrentMembersWithDifferentResourcesCannotBothPass() throws Exception {
    var validator = new PodValidator(new RecentAdmissions(TimeUnit.SECONDS.toNanos(60), now::get));
    var start = new CountDownLatch(1);
    var pool = Executors.newFixedThreadPool(2);
    try {
      var tasks = new ArrayList<Callable<ValidationResult>>();
      tasks.add(() -> { start.await(); return validator.validate(subject(member("pytorch-dist-nccl-master-0", 1)), true); });
      tasks.add(() -> { start.await(); return validator.validate(subject(member("pytorch-dist-nccl-worker-0", 2)), true); });
      var futures = tasks.stream().map(pool::submit).toList();
      start.countDown();
      var refused = 0;
      for (var f : futures) {
        if (f.get(10, TimeUnit.SECONDS).refused()) {
          refused++;
        }
      }
      assertThat(refused).as("exactly one of two disagreeing members is refused").isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void refusesSecondMemberNamingTheFirstAndTheDifference() {
    var validator = new PodValidator(new RecentAdmissions(TimeUnit.SECONDS.toNanos(60), now::get));
    assertThat(validator.validate(subject(member("pytorch-dist-nccl-master-0", 1)), true).refused()).isFalse();

    var result = validator.validate(subject(member("pytorch-dist-nccl-worker-0", 2)), true);

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "gang \"pytorch-dist-nccl\": pod asks aliyun.com/gpu=2 but member pytorch-dist-nccl-master-0 asks 1;"
                + " all pods of a gpu-topology job must request the same resources");
  }

  @Test
  void dryRunLeavesNoTraceAndExpiredEntriesAreForgotten() {
    var validator = new PodValidator(new RecentAdmissions(TimeUnit.SECONDS.toNanos(60), now::get));
    validator.validate(subject(member("pytorch-dist-nccl-master-0", 1)), false);
    assertThat(validator.validate(subject(member("pytorch-dist-nccl-worker-0", 2)), true).refused()).isFalse();

    now.addAndGet(TimeUnit.SECONDS.toNanos(61));
    assertThat(validator.validate(subject(member("pytorch-dist-nccl-master-0", 1)), true).refused()).isFalse();
  }
}
