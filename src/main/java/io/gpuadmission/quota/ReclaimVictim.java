package io.gpuadmission.quota;

/**
 * A pod that reclaim evicts: where it runs, the quota it borrowed for ({@code victimQuota}, its
 * leaf) and the quota that takes its capacity back ({@code reclaimingQuota}, the pending pod's
 * leaf), which the Event on the victim names.
 */
public record ReclaimVictim(QuotaPod pod, String node, String victimQuota, String reclaimingQuota) {}
