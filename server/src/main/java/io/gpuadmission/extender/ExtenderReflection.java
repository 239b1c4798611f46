package io.gpuadmission.extender;

import io.gpuadmission.gang.GangInspection;
import io.gpuadmission.placement.ChoiceOverrides;
import io.gpuadmission.placement.LedgerInspection;
import io.gpuadmission.placement.WorkloadInspection;
import io.gpuadmission.teamquota.QuotaInspection;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Jackson reads kube-scheduler's arguments into the wire records and writes the answers and
 * {@code /extender/inspect} from records, reflectively; a native executable must keep their
 * constructors and accessors (ExtenderEndpointNativeIT fails on any one missing).
 */
@RegisterForReflection(
    targets = {
      ExtenderWire.Args.class,
      ExtenderWire.FilterResult.class,
      ExtenderWire.HostPriority.class,
      ExtenderWire.BindingArgs.class,
      ExtenderWire.PreemptionArgs.class,
      ExtenderWire.Victims.class,
      ExtenderWire.MetaVictims.class,
      ExtenderWire.MetaPod.class,
      ExtenderWire.PreemptionResult.class,
      ExtenderWire.BindingResult.class,
      ExtenderResource.Inspection.class,
      LedgerInspection.Cluster.class,
      LedgerInspection.Node.class,
      LedgerInspection.Device.class,
      LedgerInspection.PodUse.class,
      GangInspection.Gang.class,
      GangInspection.Member.class,
      ChoiceOverrides.Override.class,
      WorkloadInspection.class,
      WorkloadInspection.Ask.class,
      QuotaInspection.class,
      QuotaInspection.Quota.class
    })
final class ExtenderReflection {
  private ExtenderReflection() {}
}
