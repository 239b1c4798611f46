package io.gpuadmission.admission;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;
import io.gpuadmission.mode.RunMode;

/**
 * The JSON mapper for Kubernetes objects: fabric8's model annotations do the work; unknown fields
 * land in each object's additional properties, so nothing the API server sent is lost, and a
 * quantity is kept as written ({@link QuantityAsWritten}) for the project's own check.
 */
public final class KubernetesJson {
  private static final ObjectMapper MAPPER = build();

  private static ObjectMapper build() {
    var builder = JsonMapper.builder()
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .addMixIn(io.fabric8.kubernetes.api.model.Quantity.class, QuantityAsWritten.MixIn.class);
    // Getters and setters called through generated lambdas, not Method.invoke with its access
    // checks: the same JSON, a fraction of the CPU per Pod read or written. Not for a command,
    // which reads a few objects once: spinning a lambda for each of the ~700 properties of the
    // Pod and Node models costs it a tenth of its CPU. (GpuAdmissionMain sets the mode before
    // anything runs; a server never has it.)
    if (!RunMode.CLI.value().equals(System.getProperty(RunMode.PROPERTY))) {
      builder.addModule(new BlackbirdModule());
    }
    return builder.build();
  }

  private KubernetesJson() {}

  public static ObjectMapper mapper() {
    return MAPPER;
  }
}
