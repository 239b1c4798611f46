package io.gpuadmission.cli;

import com.fasterxml.jackson.databind.JsonNode;

/** One Kubernetes object read from the input, and where it was read. */
record Manifest(ManifestSource source, JsonNode object) {
  String kind() {
    return object.path("kind").asText("");
  }

  String apiVersion() {
    return object.path("apiVersion").asText("");
  }

  /** The API group: "" for the core group ({@code v1}). */
  String group() {
    var apiVersion = apiVersion();
    return apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
  }

  String version() {
    var apiVersion = apiVersion();
    return apiVersion.contains("/") ? apiVersion.substring(apiVersion.indexOf('/') + 1) : apiVersion;
  }

  String name() {
    var metadata = object.path("metadata");
    var name = metadata.path("name").asText("");
    return name.isEmpty() ? metadata.path("generateName").asText("") : name;
  }

  /** The object's namespace, or {@code fallback} (kubectl's {@code -n}, else "default") when it names none. */
  String namespace(String fallback) {
    var namespace = object.path("metadata").path("namespace").asText("");
    return namespace.isEmpty() ? fallback : namespace;
  }

  boolean isCore(String expected) {
    return group().isEmpty() && expected.equals(kind());
  }
}
