package io.gpuadmission.admission;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;

/**
 * The JSON mapper for Kubernetes objects: fabric8's model annotations do the work; unknown fields
 * land in each object's additional properties, so nothing the API server sent is lost.
 */
public final class KubernetesJson {
  private static final ObjectMapper MAPPER =
      JsonMapper.builder()
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          // Getters and setters called through generated lambdas, not Method.invoke with its
          // access checks: the same JSON, a fraction of the CPU per Pod read or written.
          .addModule(new BlackbirdModule())
          .build();

  private KubernetesJson() {}

  public static ObjectMapper mapper() {
    return MAPPER;
  }
}
