package io.gpuadmission.preemption;

import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.cluster.ClusterEvents;
import io.gpuadmission.contract.GpuAnnotations;
import io.gpuadmission.placement.GpuAsk;
import io.gpuadmission.placement.NodeEligibility;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.policy.GpuPolicy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Preemption for what kube-scheduler cannot see: a pod refused only because no single GPU has room,
 * on nodes whose totals kube-scheduler finds large enough. There kube-scheduler's own preemption
 * removes every lower-priority pod, sees the pod fit by its totals, puts every pod back and finds no
 * victim ({@code preemption: expected at least one victim pod on node ...}), so it never calls the
 * extender's preempt verb. The placement leader then does what kube-scheduler's preemption would:
 * it picks the victims on the GPUs ({@link PreemptionSearch}, over the nodes kube-scheduler's own
 * filters passed), marks each with the condition kube-scheduler writes ({@code DisruptionTarget},
 * reason {@code PreemptionByScheduler}), deletes it, and nominates the node in the pod's {@code
 * status.nominatedNodeName}. kube-scheduler keeps that nomination (its queue reads it from the pod),
 * counts the pod on that node for pods of lower priority, and does not preempt again for the pod
 * while those victims terminate ({@code PodEligibleToPreemptOthers}).
 *
 * <p>It waits {@link Timing#delay} after filter refused every node, for kube-scheduler's own
 * preemption of the same scheduling cycle: if that calls the preempt verb with candidates of its own
 * (nodes its filters refused), kube-scheduler preempts there and this does nothing; if the verb
 * drops them all, this acts at once. Only the Lease holder acts, inside its {@link LeaderGate}.
 */
public final class GpuPreemptor implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(GpuPreemptor.class);

  /**
   * How long to wait for kube-scheduler's own preemption after a refusal, and how long a
   * preemption of this replica counts as in progress before the informer shows its victims.
   */
  public record Timing(Duration delay, Duration holdFor) {}

  /**
   * Written by a new placement leader on pending pods that may preempt, so that kube-scheduler
   * tries them again now and its filter reaches the new leader ({@link PodRequeue}).
   */
  public static final String REQUEUED = PodRequeue.REQUEUED;

  /** A refused pod waiting for its attempt. */
  private record Pending(String namespace, String name, List<String> nodes, ScheduledFuture<?> attempt) {}

  /** A preemption this replica made: its victims, the node the pod was nominated to, and when. */
  private record Made(List<String> victims, String node, Instant at) {}

  /** How soon an attempt looks again while the informer has not shown this replica's last preemption. */
  private static final Duration UNSEEN_RETRY = Duration.ofMillis(50);

  private final KubernetesClient client;
  private final PreemptionSearch search;
  private final PlacementDecider decider;
  private final GpuLedger ledger;
  private final PodFactsIndex pods;
  private final LeaderGate gate;
  private final Supplier<GpuPolicy> policies;
  private final Clock clock;
  private final Timing timing;
  private final PreemptionMetrics metrics;
  private final PodRequeue requeue;
  private final Map<String, Pending> pending = new ConcurrentHashMap<>();
  private final Map<String, Made> made = new ConcurrentHashMap<>();
  private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "gpu-preemption"));

  public GpuPreemptor(
      KubernetesClient client,
      PreemptionSearch search,
      PlacementDecider decider,
      GpuLedger ledger,
      PodFactsIndex pods,
      LeaderGate gate,
      Supplier<GpuPolicy> policies,
      Clock clock,
      Timing timing,
      PreemptionMetrics metrics) {
    this.client = client;
    this.search = search;
    this.decider = decider;
    this.ledger = ledger;
    this.pods = pods;
    this.gate = gate;
    this.policies = policies;
    this.clock = clock;
    this.timing = timing;
    this.metrics = metrics;
    this.requeue = new PodRequeue(client, clock);
    gate.onChange(this::leadershipChanged);
  }

  /**
   * An attempt waits for its delay on the replica that answered the filter, and only the leader
   * acts: one that was waiting when the Lease moved is lost with it (the old leader may never
   * reach the API server again). A new leader therefore has kube-scheduler try every pending pod
   * that may preempt again at the start of its term; the filter then reaches it.
   */
  private void leadershipChanged() {
    if (!gate.leading()) {
      pending.values().forEach(waiting -> waiting.attempt().cancel(false));
      pending.clear(); // the new leader requeues them
      return;
    }
    try {
      // Not inside the gate: a step-down must not wait for these calls to a stalled API server
      // (a nudge written just after stepping down does no harm).
      loop.execute(this::requeuePending);
    } catch (RejectedExecutionException closing) {
      // closed
    }
  }

  private void requeuePending() {
    var requeued = 0;
    for (var facts : pods.mayPreempt()) {
      if (!gate.leading()) {
        break;
      }
      if (pending.containsKey(facts.uid())) {
        continue; // refused here already: its attempt follows
      }
      try {
        if (requeue(facts)) {
          requeued++;
        }
      } catch (KubernetesClientException e) {
        LOG.infof("could not requeue pending pod %s after a change of placement leader (%s); kube-scheduler tries it again at its next cluster event",
            facts.pod(), e.getMessage());
      }
    }
    if (requeued > 0) {
      LOG.infof("%s leads placement: asked kube-scheduler to try %d pending pod%s that may preempt again (a preemption waiting on the last leader is lost with it)",
          gate.identity(), requeued, requeued == 1 ? "" : "s");
    }
  }

  /** Only a pod kube-scheduler found unschedulable, that may still preempt, gets the annotation. */
  private boolean requeue(PodFacts facts) {
    return requeue.requeue(facts, pod -> !PreemptionRules.neverPreempts(pod));
  }

  /**
   * Filter refused every node for {@code pod}; {@code nodes} are those where evicting pods could
   * make room (kube-scheduler's own filters passed them). On the leader, an attempt follows after
   * {@link Timing#delay} unless kube-scheduler's preemption takes the pod first, for a pod the pod
   * informer knows by then.
   */
  public void refused(Pod pod, List<String> nodes) {
    var uid = pod.getMetadata().getUid();
    if (!gate.leading() || uid == null || nodes.isEmpty() || PreemptionRules.neverPreempts(pod)) {
      return;
    }
    pending.compute(uid, (key, old) -> {
      if (old != null) {
        return new Pending(old.namespace(), old.name(), List.copyOf(nodes), old.attempt());
      }
      try {
        var attempt = loop.schedule(() -> attempt(uid), timing.delay().toMillis(), TimeUnit.MILLISECONDS);
        return new Pending(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), List.copyOf(nodes), attempt);
      } catch (RejectedExecutionException closing) {
        return null;
      }
    });
  }

  /** kube-scheduler's preemption found candidates it will act on for this pod: nothing to do here. */
  public void kubeSchedulerPreempts(String uid) {
    var waiting = pending.remove(uid);
    if (waiting != null) {
      waiting.attempt().cancel(false);
    }
  }

  /** kube-scheduler's preemption found no candidate it can use for this pod: attempt now. */
  public void kubeSchedulerCannot(String uid) {
    var waiting = pending.get(uid);
    if (waiting != null && waiting.attempt().cancel(false)) {
      try {
        loop.execute(() -> attempt(uid));
      } catch (RejectedExecutionException closing) {
        pending.remove(uid);
      }
    }
  }

  /**
   * True while a preemption for this pod is under way: this replica's, until the informer shows its
   * victims going, or any scheduler's, while lower-priority pods it marked are still terminating on
   * the node the pod is nominated to (kube-scheduler's own test).
   */
  public boolean inProgress(Pod pod) {
    var uid = pod.getMetadata().getUid();
    var mine = uid == null ? null : made.get(uid);
    if (mine != null && clock.instant().isBefore(mine.at().plus(timing.holdFor()))
        && mine.victims().stream().anyMatch(victim -> pods.facts(victim).filter(f -> !f.terminating()).isPresent())) {
      return true;
    }
    return PreemptionRules.victimsTerminating(pod, pods, ledger);
  }

  private void attempt(String uid) {
    var waiting = pending.get(uid);
    if (waiting == null) {
      return;
    }
    if (pods.facts(uid).isEmpty()) {
      // Not a pod of the cluster (warm-up's samples, a pod deleted meanwhile): nobody to preempt for.
      pending.remove(uid);
      LOG.debugf("no preemption for %s/%s: the pod informer does not know it", waiting.namespace(), waiting.name());
      return;
    }
    if (!ownPreemptionsSeen()) {
      // Two pods refused together are tried one after the other: the second must see the first's
      // victims terminating and its nomination, or it evicts another pod for the same room.
      try {
        var again = loop.schedule(() -> attempt(uid), UNSEEN_RETRY.toMillis(), TimeUnit.MILLISECONDS);
        pending.computeIfPresent(uid, (key, old) -> new Pending(old.namespace(), old.name(), old.nodes(), again));
      } catch (RejectedExecutionException closing) {
        pending.remove(uid);
      }
      return;
    }
    pending.remove(uid);
    try {
      gate.whileLeading(() -> preempt(uid, waiting));
    } catch (RuntimeException e) {
      metrics.record("error");
      LOG.warnf(e, "preemption for pod %s/%s failed", waiting.namespace(), waiting.name());
    }
  }

  /**
   * Whether the pod informer shows every preemption this replica made within {@link
   * Timing#holdFor}: its victims terminating (or gone) and its pod nominated (or gone, or bound).
   */
  private boolean ownPreemptionsSeen() {
    var now = clock.instant();
    for (var entry : made.entrySet()) {
      var m = entry.getValue();
      if (!now.isBefore(m.at().plus(timing.holdFor()))) {
        continue;
      }
      if (m.victims().stream().anyMatch(victim -> pods.facts(victim).filter(f -> !f.terminating()).isPresent())) {
        return false;
      }
      if (pods.facts(entry.getKey()).filter(f -> f.node().isEmpty() && !f.terminating() && !m.node().equals(f.nominated())).isPresent()) {
        return false;
      }
    }
    return true;
  }

  private boolean preempt(String uid, Pending waiting) {
    var pod = client.pods().inNamespace(waiting.namespace()).withName(waiting.name()).get();
    if (pod == null || !uid.equals(pod.getMetadata().getUid()) || pod.getMetadata().getDeletionTimestamp() != null
        || (pod.getSpec() != null && pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty())) {
      return false;
    }
    if (PreemptionRules.neverPreempts(pod) || inProgress(pod)) {
      return false;
    }
    var ask = GpuAsk.of(pod, policies.get());
    if (ask.kind() == GpuAsk.Kind.NONE || !decider.filter(ask, NodeEligibility.of(pod, policies.get()), waiting.nodes(), pods, PodFacts.priority(pod), uid).passed().isEmpty()) {
      return false; // it fits now: kube-scheduler places it at its next attempt
    }
    var preemptor = new PreemptionSearch.Preemptor(uid, waiting.namespace() + "/" + waiting.name(), PodFacts.priority(pod), ask);
    Optional<NodeVictims> best = Optional.empty();
    for (var node : waiting.nodes()) {
      var candidate = search.onNode(preemptor, node, Set.of()).filter(v -> !v.victims().isEmpty());
      if (candidate.isPresent() && (best.isEmpty() || NodeVictims.BETTER_FIRST.compare(candidate.get(), best.get()) < 0)) {
        best = candidate;
      }
    }
    if (best.isEmpty()) {
      metrics.record("no_victims");
      LOG.debugf("no victims free a GPU for %s (%s) on the %d nodes it could run on", preemptor.pod(), ask, waiting.nodes().size());
      // kube-scheduler clears the nomination of a pod its preemption cannot help ("Preemption is
      // not helpful for scheduling"); here its own preemption failed with an error and left it, so
      // the pod would hold that node's GPUs against less important pods for as long as it waits.
      var nominated = pod.getStatus() == null ? null : pod.getStatus().getNominatedNodeName();
      if (nominated != null && !nominated.isEmpty()) {
        clearNomination(waiting.namespace(), waiting.name(), uid);
        LOG.infof("cleared the nomination of %s to %s: no victims free a GPU for it there or on any node it could run on", preemptor.pod(), nominated);
      }
      return false;
    }
    execute(pod, preemptor, best.get());
    return true;
  }

  private void execute(Pod pod, PreemptionSearch.Preemptor preemptor, NodeVictims chosen) {
    var node = chosen.node();
    var now = clock.instant();
    made.values().removeIf(m -> !now.isBefore(m.at().plus(timing.holdFor())));
    made.put(preemptor.uid(), new Made(chosen.victims().stream().map(Victim::uid).toList(), node, now));
    var scheduler = pod.getSpec() == null || pod.getSpec().getSchedulerName() == null ? "default-scheduler" : pod.getSpec().getSchedulerName();
    var names = new ArrayList<String>();
    for (var victim : chosen.evicted()) {
      names.add(victim.facts().pod());
      evict(victim.facts(), pod, scheduler, node);
    }
    nominate(pod, node);
    // As kube-scheduler's prepareCandidate: less important pods nominated here may no longer fit;
    // clearing their nomination lets kube-scheduler place them elsewhere now.
    for (var lower : pods.nominatedBelow(node, preemptor.priority())) {
      try {
        clearNomination(lower.namespace(), lower.name(), lower.uid());
      } catch (KubernetesClientException e) {
        LOG.infof("could not clear the nomination of %s to %s (%s)", lower.pod(), node, e.getMessage());
      }
    }
    var what = "GPU" + (chosen.gpus().size() == 1 ? " " : "s ") + GpuAnnotations.join(chosen.gpus());
    var terminating = chosen.alreadyTerminating().stream().map(v -> v.facts().pod()).toList();
    var going = String.join(", ", terminating) + (terminating.size() == 1 ? " is" : " are") + " terminating already";
    var message = names.isEmpty()
        ? "preempted nobody: " + going + " on node " + node + ", which frees " + what + " for this pod (" + preemptor.ask() + ") beside the pods nominated there"
        : "preempted " + String.join(", ", names) + " on node " + node + " to free " + what + " for this pod (" + preemptor.ask() + ")"
            + (terminating.isEmpty() ? "" : "; " + going + " there");
    publish(pod, "Normal", "Preempting",
        message + "; nominated to " + node + " (kube-scheduler counts GPU memory per node and found no victims there)");
    metrics.record("preempted");
    metrics.victims(names.size());
    LOG.infof("%s for %s (priority %d)", message, preemptor.pod(), preemptor.priority());
  }

  /**
   * As kube-scheduler's {@code PreemptPod}: the DisruptionTarget condition first (a JSON Patch
   * that adds it to the pod's conditions, computed by fabric8's edit from the pod as read), then
   * the delete.
   */
  void evict(PodFacts victim, Pod preemptor, String scheduler, String node) {
    var condition =
        new PodConditionBuilder()
            .withType(PodFacts.DISRUPTION_TARGET)
            .withStatus("True")
            .withReason(PodFacts.PREEMPTION_BY_SCHEDULER)
            .withMessage(scheduler + ": preempting to accommodate a higher priority pod")
            .withLastTransitionTime(DateTimeFormatter.ISO_INSTANT.format(clock.instant().truncatedTo(ChronoUnit.SECONDS)))
            .build();
    var pods = client.pods().inNamespace(victim.namespace()).withName(victim.name());
    try {
      pods.editStatus(pod -> {
        if (!victim.uid().equals(pod.getMetadata().getUid())) {
          throw new IllegalStateException("recreated");
        }
        if (pod.getStatus() == null) {
          pod.setStatus(new io.fabric8.kubernetes.api.model.PodStatus());
        }
        var conditions = new ArrayList<PodCondition>();
        if (pod.getStatus().getConditions() != null) {
          pod.getStatus().getConditions().stream().filter(c -> !PodFacts.DISRUPTION_TARGET.equals(c.getType())).forEach(conditions::add);
        }
        conditions.add(condition);
        pod.getStatus().setConditions(conditions);
        return pod;
      });
      pods.delete();
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
      return; // gone already
    } catch (IllegalStateException recreated) {
      return; // a new pod under the victim's name: not the one chosen
    }
    publish(victim, "Normal", "Preempted",
        "Preempted by pod " + preemptor.getMetadata().getUid() + " (" + preemptor.getMetadata().getNamespace() + "/"
            + preemptor.getMetadata().getName() + ") on node " + node);
  }

  void nominate(Pod pod, String node) {
    var status = client.getKubernetesSerialization().asJson(Map.of("status", Map.of("nominatedNodeName", node)));
    client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
        .subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), status);
  }

  /**
   * {@code status.nominatedNodeName} removed, if the pod under that name is still the one meant (a
   * JSON Patch that tests the UID first); a pod gone or recreated is left alone.
   */
  void clearNomination(String namespace, String name, String uid) {
    var patch = "[{\"op\":\"test\",\"path\":\"/metadata/uid\",\"value\":" + client.getKubernetesSerialization().asJson(uid)
        + "},{\"op\":\"remove\",\"path\":\"/status/nominatedNodeName\"}]";
    try {
      client.pods().inNamespace(namespace).withName(name).subresource("status").patch(PatchContext.of(PatchType.JSON), patch);
    } catch (KubernetesClientException e) {
      // 404: gone; 422: recreated, or no nomination left to remove.
      if (e.getCode() != 404 && e.getCode() != 422) {
        throw e;
      }
    }
  }

  void publish(Pod pod, String type, String reason, String message) {
    publish(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid(), type, reason, message);
  }

  private void publish(PodFacts pod, String type, String reason, String message) {
    publish(pod.namespace(), pod.name(), pod.uid(), type, reason, message);
  }

  private void publish(String namespace, String name, String uid, String type, String reason, String message) {
    var about = new ObjectReferenceBuilder().withApiVersion("v1").withKind("Pod").withNamespace(namespace).withName(name).withUid(uid).build();
    try {
      ClusterEvents.publish(client, clock.instant(), about, type, reason, message);
    } catch (RuntimeException e) {
      LOG.debugf("could not publish Event %s on %s/%s: %s", reason, namespace, name, e.getMessage());
    }
  }

  @Override
  public void close() {
    loop.shutdownNow();
  }
}
