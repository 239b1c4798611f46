package io.gpuadmission.placement;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** Settings of the scheduler extender (application configuration, not policy: they are operational). */
@ConfigMapping(prefix = "gpu-admission.placement")
public interface PlacementConfig {
  /** How long a bind's choice counts without the informer showing the bound pod before it is dropped. */
  @WithDefault("30s")
  Duration assumeTimeout();

  /**
   * How long the node kube-scheduler is about to bind a pod to (prioritize's top node, or the only
   * node filter passed) stays held for it if its bind does not come first. kube-scheduler binds
   * within well under a second of choosing unless a permit or pre-bind plugin (volume binding) holds
   * the pod; a pod whose bind comes later than this is checked again at bind, as without the hold.
   */
  @WithDefault("30s")
  Duration choiceTimeout();

  /**
   * How long a gang's plan waits for all its members to bind before it is released and made again
   * (a member kube-scheduler cannot place where planned, for reasons the planner does not see).
   */
  @WithDefault("60s")
  Duration gangPlanTimeout();

  /**
   * How long the leader waits, after filter refused a pod everywhere, for kube-scheduler's own
   * preemption of that scheduling cycle (its preempt verb call) before it preempts for the pod
   * itself on the GPUs.
   */
  @WithDefault("1s")
  Duration preemptionDelay();

  /** Name of the coordination.k8s.io Lease, in the webhook's namespace, that elects the binding replica. */
  @WithDefault("gpu-admission-placement")
  String leaseName();

  /** How long a Lease holds without renewal (kube-scheduler's default). */
  @WithDefault("15s")
  Duration leaseDuration();

  /** How long the leader keeps trying to renew before it steps down; shorter than the lease. */
  @WithDefault("10s")
  Duration renewDeadline();

  /** How often candidates try to acquire the Lease. */
  @WithDefault("2s")
  Duration retryPeriod();

  /** This replica's name in the Lease; defaults to POD_NAME, else the host name and process id. */
  Optional<String> identity();
}
