/**
 * The GPU allocator: which GPUs of which node a pod gets. Records in, decisions out; no
 * Kubernetes, Quarkus, Jackson or clock types (an ArchUnit-style test keeps it so), deterministic,
 * safe to call from many threads on immutable snapshots.
 */
package io.gpuadmission.allocator;
