package io.gpuadmission.policy;

/**
 * Team quotas (the ElasticQuotaTree in {@code kube-system}): {@code enabled} false ignores the tree,
 * for clusters where ACK's own capacity scheduling enforces it (one tree has one enforcer). {@code
 * onNeverFits}: what the validating webhook does with a pod or workload asking more than its quota
 * leaf's max (or an ancestor's), which can never run: admit it with a warning, or refuse it.
 */
public record QuotaPolicy(boolean enabled, FeasibilityPolicy.OnInfeasible onNeverFits) {}
