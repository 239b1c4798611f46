package io.gpuadmission.placement;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.contract.ContainerGpus;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.PlacementDecider.Choice;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Bind: refuse a pod that is already bound (saying where), re-check the node against the pod's own
 * node selection and GPU resources ({@link NodeEligibility}) and against the ledger, re-check the
 * team quota ({@link Quota}), choose the GPUs and reserve them, write the choice on the pod in one
 * patch (on condition that the pod is still as bind read it), then create the pod's Binding.
 * A failure at any step undoes the reservation and comes back as the error kube-scheduler shows
 * (it then retries the pod). Only the leader binds (see {@link LeaderGate}).
 */
public final class PodBinder {
  private static final Logger LOG = Logger.getLogger(PodBinder.class);

  private final KubernetesClient client;
  private final GpuLedger ledger;
  private final PlacementDecider decider;
  private final LeaderGate gate;
  private final Supplier<GpuPolicy> policies;
  private final Clock clock;
  private final Duration assumeFor;
  private final Object choosing = new Object();
  private volatile BiConsumer<String, Instant> onBound = (uid, at) -> {};
  private volatile Nominations nominations = Nominations.NONE;
  private volatile Quota quota = (namespace, uid, ask) -> Optional.empty();

  /**
   * The team quota, asked again at bind with the GPUs every bind in progress holds: kube-scheduler
   * filters the next pod while earlier ones are still binding (its binding cycle runs apart from its
   * scheduling cycle), so two pods that each fit a team's max at filter could pass it together.
   * Binds reserve one at a time, each counted before the next is asked, as a scheduler plugin's
   * Reserve would count it.
   */
  @FunctionalInterface
  public interface Quota {
    /** Why a pod of {@code namespace} (UID {@code uid}) asking {@code ask} may not take GPUs now; empty when it may. */
    Optional<String> refusal(String namespace, String uid, GpuAsk ask);
  }

  public PodBinder(
      KubernetesClient client,
      GpuLedger ledger,
      PlacementDecider decider,
      LeaderGate gate,
      Supplier<GpuPolicy> policies,
      Clock clock,
      Duration assumeFor) {
    this.client = client;
    this.ledger = ledger;
    this.decider = decider;
    this.gate = gate;
    this.policies = policies;
    this.clock = clock;
    this.assumeFor = assumeFor;
  }

  /** Told the pod UID and the instant of every Binding this replica creates (gang placement times). */
  public void onBound(BiConsumer<String, Instant> listener) {
    this.onBound = listener;
  }

  /** Holds the GPUs of pods nominated to a node for them, as filter does, when choosing a pod's GPUs there. */
  public void respect(Nominations nominated) {
    this.nominations = nominated;
  }

  /** Asks {@code quota} before every bind of a pod that is not a gang member (a gang is admitted whole when planned). */
  public void respectQuota(Quota quota) {
    this.quota = quota;
  }

  /** Binds the pod; returns "" on success, else the error for kube-scheduler. */
  public String bind(BindRequest request) {
    return bindIfLeading(request).orElseGet(this::notLeader);
  }

  /**
   * The error a replica that does not bind answers (kube-scheduler retries the bind). It names a
   * leader only while that leader's Lease holds, and never names this replica as someone else's.
   */
  public String notLeader() {
    var leader = gate.leader();
    var self = "gpu-admission replica " + gate.identity();
    if (leader.equals(gate.identity())) {
      return gate.renewalOverdue()
          ? self + " could not renew the placement Lease before its renew deadline and stopped binding; retry"
          : self + " holds the placement Lease and binds once it has read the pods into its GPU ledger; retry";
    }
    if (!leader.isEmpty()) {
      return self + " is not the leader (leader: " + leader + "); retry";
    }
    return "no gpu-admission replica holds the placement Lease now"
        + gate.formerLeader().map(f -> " (" + f.identity() + "'s expired at " + f.until().truncatedTo(ChronoUnit.SECONDS) + ")").orElse("")
        + "; " + self + " campaigns for it; retry";
  }

  /** Binds the pod if this replica leads: "" or the error; empty when it does not lead. */
  public Optional<String> bindIfLeading(BindRequest request) {
    return gate.whileLeading(() -> bindAsLeader(request));
  }

  private String bindAsLeader(BindRequest request) {
    if (request.podUid() != null) {
      // The bind kube-scheduler chose the node for has come: chosen again below, on the node it names.
      ledger.release(request.podUid());
    }
    Pod pod;
    try {
      pod = client.pods().inNamespace(request.namespace()).withName(request.podName()).get();
    } catch (KubernetesClientException e) {
      return "reading pod " + request.pod() + " failed: " + message(e);
    }
    if (pod == null) {
      return "pod " + request.pod() + " not found: it was deleted before bind";
    }
    if (request.podUid() != null && !request.podUid().isEmpty() && !request.podUid().equals(pod.getMetadata().getUid())) {
      return "pod " + request.pod() + " was replaced (UID " + pod.getMetadata().getUid() + ", asked " + request.podUid() + ")";
    }
    if (pod.getSpec() != null && pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty()) {
      // kube-scheduler retrying a bind that went through, or a direct call: binding again would
      // rewrite the GPU annotations of a pod whose containers may already run on the GPUs chosen.
      return alreadyBound(request, pod);
    }
    var ask = GpuAsk.of(pod, policies.get());
    if (ask.kind() == GpuAsk.Kind.NONE) {
      // kube-scheduler hands bind to an extender only for pods asking its managed resources; a
      // request for any other pod did not come from it, and must not place that pod anywhere.
      return "pod " + request.pod() + " asks for no GPU resource gpu-admission places; kube-scheduler binds it itself";
    }
    var uid = pod.getMetadata().getUid();
    ledger.release(uid);
    var gang =
        ask.kind() == GpuAsk.Kind.WHOLE
            ? TopologyJob.of(pod, policies.get().topology()).filter(TopologyJob::placedTogether)
            : Optional.<TopologyJob>empty();
    Optional<MemberPlan> plan = Optional.empty();
    GpuClaim claim;
    synchronized (choosing) {
      if (gang.isPresent()) {
        // A gang member binds where its gang's plan put it, on the GPUs the plan holds for it.
        plan = MemberPlan.of(pod);
        var refusal = memberRefusal(request, gang.get(), plan);
        if (refusal.isPresent()) {
          return refusal.get();
        }
        claim = GpuClaim.reserved(uid, request.pod(), request.node(), plan.get().gpus(), 0);
      } else {
        var overQuota = quota.refusal(request.namespace(), uid, ask);
        if (overQuota.isPresent()) {
          return "cannot bind " + request.pod() + " (" + ask + "): " + overQuota.get();
        }
        var priority = pod.getSpec() == null || pod.getSpec().getPriority() == null ? 0 : pod.getSpec().getPriority();
        var choice = decider.choose(ask, NodeEligibility.of(pod, policies.get()), request.node(), nominations.heldOn(request.node(), priority, uid));
        if (choice instanceof Choice.Refused refused) {
          return "cannot bind " + request.pod() + " (" + ask + "): " + refused.reason();
        }
        var gpus = ((Choice.Chosen) choice).gpus();
        claim = GpuClaim.reserved(uid, request.pod(), request.node(), gpus, ask.kind() == GpuAsk.Kind.SHARE ? ask.memory() : 0, ask.cpuMilli());
      }
      if (!ledger.reserve(claim)) {
        return ledger.claim(uid).filter(c -> c.phase() == GpuClaim.Phase.BOUND).isPresent()
            ? alreadyBound(request, pod)
            : "cannot bind " + request.pod() + ": GPUs " + GpuAnnotations.join(claim.gpus()) + " of node " + request.node() + " were just taken";
      }
    }
    var ack = policies.get().topology().ackAnnotations() && TopologyJob.of(pod, policies.get().topology()).isPresent();
    var error = annotate(request, pod, claim, ack);
    if (error.isEmpty() && !gate.leading()) {
      // The renew deadline passed while the patch was out (a slow API server): another replica may
      // lead once the Lease expires, and its Binding must not race ours for these GPUs.
      error = notLeader();
    }
    if (error.isEmpty()) {
      error = createBinding(request, pod);
    }
    if (error.isEmpty()) {
      var now = clock.instant();
      ledger.assume(uid, now.plus(assumeFor));
      onBound.accept(uid, now);
    } else {
      ledger.unreserve(uid);
      // A member's plan still holds its GPUs: kube-scheduler retries the bind on them.
      plan.ifPresent(p -> ledger.planSeen(GpuClaim.planned(uid, request.pod(), p.node(), p.gpus(), Instant.MAX)));
      LOG.warnf("bind of %s to %s rolled back: %s", request.pod(), request.node(), error);
    }
    return error;
  }

  /** Where the pod is bound and what it holds there, as its annotations (or the ledger, which read them) say. */
  private String alreadyBound(BindRequest request, Pod pod) {
    var claim = PodClaims.claimOf(pod).or(() -> ledger.claim(pod.getMetadata().getUid()).filter(c -> c.phase() == GpuClaim.Phase.BOUND));
    var node = pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty()
        ? pod.getSpec().getNodeName()
        : claim.map(GpuClaim::node).orElse("?");
    var held = claim.map(c -> " (" + PodClaims.describe(c, policies.get().sharedMemory().resourceName()) + ")").orElse("");
    return "pod " + request.pod() + " is already bound to node " + node + held + "; a pod is bound only once";
  }

  /** Why a gang member cannot bind to the requested node: no plan yet, or planned elsewhere. */
  private static Optional<String> memberRefusal(BindRequest request, TopologyJob job, Optional<MemberPlan> plan) {
    var gang = "gang \"" + request.namespace() + "/" + job.displayName() + "\": ";
    if (plan.isEmpty()) {
      return Optional.of(gang + request.pod() + " has no plan yet (a gang's members are placed together); retried once the plan is made");
    }
    if (!plan.get().node().equals(request.node())) {
      return Optional.of(gang + request.pod() + " is planned on " + plan.get().place() + ", not on " + request.node());
    }
    return Optional.empty();
  }

  /**
   * One merge patch with every annotation of the choice ({@code ack}: ACK's topology ones too),
   * on condition that the pod is still as bind read it: the patch carries the pod's
   * resourceVersion, which the API server checks before applying it. A patch that arrives late (a
   * replica that lost its Lease while the patch was on its way) then cannot overwrite the choice
   * of the replica that bound the pod meanwhile; its 409 is answered as the lost race it is.
   */
  private String annotate(BindRequest request, Pod read, GpuClaim claim, boolean ack) {
    Map<String, String> annotations =
        claim.whole()
            ? withSplit(GpuAnnotations.whole(claim.gpus(), ack), read, claim.gpus())
            : GpuAnnotations.share(
                claim.gpus().get(0),
                claim.memory(),
                ledger.capacity(claim.node()).map(c -> c.memory().get(claim.gpus().get(0))).orElse(0L),
                clock.instant());
    var metadata = new java.util.LinkedHashMap<String, Object>();
    if (read.getMetadata().getResourceVersion() != null) {
      metadata.put("resourceVersion", read.getMetadata().getResourceVersion());
    }
    metadata.put("annotations", annotations);
    var patch = client.getKubernetesSerialization().asJson(Map.of("metadata", metadata));
    try {
      client.pods().inNamespace(request.namespace()).withName(request.podName()).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
      return "";
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return lostRace(request, read);
      }
      return "annotating pod " + request.pod() + " failed: " + message(e);
    }
  }

  /** Why the annotations' patch met a pod changed since bind read it: bound by another replica, or updated. */
  private String lostRace(BindRequest request, Pod read) {
    Pod now;
    try {
      now = client.pods().inNamespace(request.namespace()).withName(request.podName()).get();
    } catch (KubernetesClientException e) {
      now = null;
    }
    if (now != null && now.getSpec() != null && now.getSpec().getNodeName() != null && !now.getSpec().getNodeName().isEmpty()) {
      return "lost the race to bind: " + alreadyBound(request, now);
    }
    return "pod " + request.pod() + " changed while it was being bound (resourceVersion " + read.getMetadata().getResourceVersion()
        + " is no longer current); nothing was written, retry";
  }

  /**
   * Whole GPUs: also each container's part ({@link ContainerGpus}) when more than one container
   * asks GPUs, which the node agent's device plugin hands to that container.
   */
  private Map<String, String> withSplit(Map<String, String> annotations, Pod pod, java.util.List<Integer> gpus) {
    var topology = policies.get().topology();
    var split = PodContainerGpus.split(pod, gpus, c -> io.gpuadmission.pod.PodResources.amount(c, topology.resourceName())
        .add(io.gpuadmission.pod.PodResources.amount(c, topology.wholeGpuResource())).intValue());
    if (split.isEmpty() || split.get().size() < 2) {
      // One container: its part is the pod's indices, which the plugin reads as such.
      return annotations;
    }
    var out = new java.util.LinkedHashMap<>(annotations);
    out.put(ContainerGpus.CONTAINER_GPUS, ContainerGpus.format(split.get()));
    return out;
  }

  private String createBinding(BindRequest request, Pod pod) {
    Binding binding =
        new BindingBuilder()
            .withNewMetadata()
            .withName(request.podName())
            .withNamespace(request.namespace())
            .withUid(pod.getMetadata().getUid())
            .endMetadata()
            .withNewTarget()
            .withApiVersion("v1")
            .withKind("Node")
            .withName(request.node())
            .endTarget()
            .build();
    try {
      client.bindings().inNamespace(request.namespace()).resource(binding).create();
      return "";
    } catch (KubernetesClientException e) {
      return "binding pod " + request.pod() + " to node " + request.node() + " failed: " + message(e);
    }
  }

  private static String message(KubernetesClientException e) {
    var status = e.getStatus();
    if (status != null && status.getMessage() != null) {
      return status.getMessage() + " (HTTP " + e.getCode() + ")";
    }
    // No answer from the API server: fabric8's message names the call, its cause says why.
    return e.getCause() == null ? e.getMessage() : e.getMessage() + " " + e.getCause().getMessage();
  }
}
