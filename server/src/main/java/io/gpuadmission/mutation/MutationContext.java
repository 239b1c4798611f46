package io.gpuadmission.mutation;

import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.policy.GpuPolicy;

/**
 * What a rule may read besides the pod: the request's namespace (a pod being created may not carry
 * one yet), one policy snapshot and one view of the cluster's GPU models.
 */
public record MutationContext(String namespace, GpuPolicy policy, GpuModelCatalog models) {}
