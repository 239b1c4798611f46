package io.gpuadmission.bench;

import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.admission.MalformedReviewException;
import io.gpuadmission.admission.MutationService;
import io.gpuadmission.admission.ReviewCodec;
import io.gpuadmission.admission.ValidationService;
import io.gpuadmission.cluster.InformerClusterView;
import io.gpuadmission.cluster.NamespaceInventory;
import io.gpuadmission.cluster.NodeInventory;
import io.gpuadmission.cluster.PodInventory;
import io.gpuadmission.cluster.WebhookNamespace;
import io.gpuadmission.policy.PolicyConfig;
import io.gpuadmission.policy.PolicyStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The whole admission path without HTTP: request bytes in, decode, rules, patch, response bytes
 * out, for the load harness' three AdmissionReview fixtures (copied under {@code bench/}). Run with {@code bench/jmh.sh
 * AdmissionPathBenchmark -prof gc}: {@code gc.alloc.rate.norm} (bytes per review) is the figure
 * machine load cannot move. No cluster: the caches are empty, as in the harness runs.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class AdmissionPathBenchmark {
  @Param({"gpu-topology", "gpu-mem", "cpu-only"})
  public String fixture;

  private byte[] review;
  private MutationService mutation;
  private ValidationService validation;

  @Setup
  public void setUp() throws IOException {
    try (var in = getClass().getResourceAsStream("/bench/admissionreview-" + fixture + ".json")) {
      review = in.readAllBytes();
    }
    var policies = new PolicyStore();
    var metrics = new AdmissionMetrics(new SimpleMeterRegistry());
    metrics.startRecording();
    // No cluster: informers are never started, so the inventories stay empty.
    var nodes = new NodeInventory(null, policies);
    var gangPods = new PodInventory(null, policies);
    var cluster = new InformerClusterView(nodes, gangPods, new NamespaceInventory(null));
    mutation = new MutationService(policies, nodes, metrics);
    var config = new DefaultPolicyConfig();
    validation =
        new ValidationService(
            policies, mutation, config, new WebhookNamespace(config), cluster, nodes, gangPods, new io.gpuadmission.cluster.QuotaTreeStore(), metrics, Duration.ofSeconds(15));
  }

  @Benchmark
  public byte[] mutate() throws MalformedReviewException {
    return ReviewCodec.encode(mutation.review(ReviewCodec.decode(review)));
  }

  @Benchmark
  public byte[] validate() throws MalformedReviewException {
    return ReviewCodec.encode(validation.review(ReviewCodec.decode(review)));
  }

  private static final class DefaultPolicyConfig implements PolicyConfig {
    @Override
    public String configMapName() {
      return "gpu-admission-policy";
    }

    @Override
    public String key() {
      return "policy.yaml";
    }

    @Override
    public Optional<String> namespace() {
      return Optional.empty();
    }
  }
}
