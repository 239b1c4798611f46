package io.gpuadmission.bench;

import com.fasterxml.jackson.databind.util.TokenBuffer;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.pod.NullListEntry;
import java.io.IOException;
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
 * What a null-list-entry scan of its own costs (the extender's; the admission decoder notes the same
 * while it skips the pod, see {@code ObjectOutline}): over the pod's tokens, on the review fixtures
 * of {@link AdmissionPathBenchmark} ({@code bench/jmh.sh MalformedPodCheckBenchmark -prof gc}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class MalformedPodCheckBenchmark {
  @Param({"gpu-topology", "gpu-mem", "cpu-only"})
  public String fixture;

  private TokenBuffer pod;

  @Setup
  public void setUp() throws IOException {
    try (var in = getClass().getResourceAsStream("/bench/admissionreview-" + fixture + ".json")) {
      var object = KubernetesJson.mapper().readTree(in).path("request").path("object");
      // As ReviewObject keeps a review's object: the tokens read off the wire.
      var parser = object.traverse(KubernetesJson.mapper());
      parser.nextToken();
      pod = TokenBuffer.asCopyOfValue(parser);
    }
  }

  @Benchmark
  public Optional<String> findNullListEntry() throws IOException {
    try (var parser = pod.asParser(KubernetesJson.mapper())) {
      return NullListEntry.find(parser, "", null);
    }
  }
}
