package io.gpuadmission.realcluster;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The real control plane an opt-in test runs against: {@code GPU_ADMISSION_REAL_KUBECONFIG} names
 * a cluster-admin kubeconfig of a throwaway cluster (the tests create and delete namespaces, CRDs
 * and pods there), {@code GPU_ADMISSION_HARNESS} the shared harness that runs it (its
 * {@code scheduler.sh} restarts kube-scheduler with the extender; only the tests that need
 * kube-scheduler ask for it). Without them the tests are skipped with a loud line, never passed:
 * the fabric8 mock server accepts what a real API server refuses. bench/README.md ("Real control
 * planes") says how to run them.
 */
public final class RealCluster {
  public static final String KUBECONFIG = "GPU_ADMISSION_REAL_KUBECONFIG";
  public static final String HARNESS = "GPU_ADMISSION_HARNESS";

  private RealCluster() {}

  /** The kubeconfig of the cluster given, if one is. */
  public static Optional<Path> kubeconfig() {
    return Optional.ofNullable(System.getenv(KUBECONFIG)).filter(s -> !s.isBlank()).map(Path::of).filter(Files::isRegularFile);
  }

  /** The harness given, if one is (its scheduler.sh). */
  public static Optional<Path> harness() {
    return Optional.ofNullable(System.getenv(HARNESS)).filter(s -> !s.isBlank()).map(Path::of)
        .filter(p -> Files.isExecutable(p.resolve("scheduler.sh")));
  }

  /** A client of the cluster given (cluster-admin). */
  public static KubernetesClient admin() {
    var config = Config.fromKubeconfig(null, readKubeconfig(), kubeconfig().orElseThrow().toString());
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  private static String readKubeconfig() {
    try {
      return Files.readString(kubeconfig().orElseThrow());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Runs a test class only with a real cluster given; says loudly that it skipped one otherwise. */
  public static final class Given implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
      if (kubeconfig().isPresent()) {
        return ConditionEvaluationResult.enabled("real cluster " + kubeconfig().get());
      }
      var line = "=== SKIPPED " + context.getDisplayName() + ": no real control plane given (" + KUBECONFIG
          + " unset or no file); the mock API server cannot judge what this checks. bench/README.md, \"Real control planes\", says how ===";
      System.err.println(line);
      return ConditionEvaluationResult.disabled(line);
    }
  }

  /** As {@link Given}, also needing the harness (kube-scheduler restarted with the extender). */
  public static final class GivenWithScheduler implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
      if (kubeconfig().isPresent() && harness().isPresent()) {
        return ConditionEvaluationResult.enabled("real cluster " + kubeconfig().get() + ", harness " + harness().get());
      }
      var line = "=== SKIPPED " + context.getDisplayName() + ": no real control plane and harness given (" + KUBECONFIG + ", " + HARNESS
          + "); kube-scheduler's queue and preemption run only there. bench/README.md, \"Real control planes\", says how ===";
      System.err.println(line);
      return ConditionEvaluationResult.disabled(line);
    }
  }
}
