package io.gpuadmission.quota;

/** A bound (or assumed) pod and the node it runs on: what reclaim may evict. */
public record RunningPod(QuotaPod pod, String node) {}
