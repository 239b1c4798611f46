package io.gpuadmission.validation;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One pod template of a workload: its role ("Worker", or "pod" for single-template workloads),
 * how many pods it makes, where it sits in the object, and the template JSON.
 */
public record PodTemplate(String role, int replicas, String path, JsonNode template) {}
