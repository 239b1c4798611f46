package io.gpuadmission.gang;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.placement.MemberPlan;
import io.gpuadmission.placement.PodClaims;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The members of every gang, kept current from the pod informer (the same stream the GPU ledger
 * reads). Every replica holds the same registry, so every replica gives a member the same answer.
 */
public final class GangRegistry {
  private final Supplier<GpuPolicy> policies;
  private final Map<String, GangMember> byUid = new HashMap<>();
  private final Map<GangKey, Map<String, GangMember>> byGang = new HashMap<>();
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  private final Map<String, Orphan> orphans = new HashMap<>();

  /** A pending pod that carries a plan but is no gang member (any more). */
  public record Orphan(String namespace, String name, String uid) {}

  public GangRegistry(Supplier<GpuPolicy> policies) {
    this.policies = policies;
  }

  /** Called after every change (from the informer's thread): keep it short. */
  public void onChange(Runnable listener) {
    listeners.add(listener);
  }

  /** A pod as it is now: a member of some gang, or no longer one. */
  public void current(Pod pod) {
    var uid = pod.getMetadata() == null ? null : pod.getMetadata().getUid();
    if (uid == null) {
      return;
    }
    var member = GangMember.of(pod, policies.get());
    var unbound = pod.getSpec() == null || pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty();
    synchronized (this) {
      remove(uid);
      orphans.remove(uid);
      if (member.isEmpty() && unbound && MemberPlan.marked(pod) && !PodClaims.finished(pod) && pod.getMetadata().getDeletionTimestamp() == null) {
        orphans.put(uid, new Orphan(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), uid));
      }
      member.ifPresent(m -> {
        byUid.put(uid, m);
        byGang.computeIfAbsent(m.gang(), k -> new LinkedHashMap<>()).put(uid, m);
      });
    }
    listeners.forEach(Runnable::run);
  }

  public void gone(Pod pod) {
    var uid = pod.getMetadata() == null ? null : pod.getMetadata().getUid();
    if (uid == null) {
      return;
    }
    synchronized (this) {
      remove(uid);
      orphans.remove(uid);
    }
    listeners.forEach(Runnable::run);
  }

  /** Pods with a plan that are no gang members; the leader takes their plans off. */
  public synchronized List<Orphan> orphans() {
    return List.copyOf(orphans.values());
  }

  public synchronized List<GangMember> members(GangKey gang) {
    return new ArrayList<>(byGang.getOrDefault(gang, Map.of()).values());
  }

  public synchronized Optional<GangMember> member(String uid) {
    return Optional.ofNullable(byUid.get(uid));
  }

  /**
   * The host ports members of every gang take or are planned to take, by node: a member planned
   * there must not ask for one of them.
   */
  public synchronized Map<String, Set<Integer>> hostPortsByNode(Set<String> except) {
    var out = new HashMap<String, Set<Integer>>();
    for (var member : byUid.values()) {
      if (except.contains(member.uid())) {
        continue;
      }
      var node = member.bound() ? Optional.of(member.node()) : member.plan().map(p -> p.node());
      if (node.isPresent() && !member.hostPorts().isEmpty()) {
        out.computeIfAbsent(node.get(), n -> new java.util.TreeSet<>()).addAll(member.hostPorts());
      }
    }
    return out;
  }

  /**
   * Forgets every member and reads them again from {@code pods}, the pod informer's store (the
   * policy's job labels changed). The store is read under the lock the informer's handlers take:
   * the informer updates its store before it calls them, so a pod deleted or changed after the read
   * is told here after this returns, and never comes back as it was (a ghost member).
   */
  public synchronized void replaceAll(java.util.function.Supplier<List<Pod>> pods) {
    byUid.clear();
    byGang.clear();
    orphans.clear();
    pods.get().forEach(this::current);
  }

  public synchronized List<GangKey> gangs() {
    return List.copyOf(new TreeSet<>(byGang.keySet()));
  }

  /** The status of a gang whose member {@code asking} may not have reached the informer yet. */
  public GangStatus status(GangKey gang, Optional<GangMember> asking) {
    var members = members(gang);
    asking.ifPresent(a -> {
      members.removeIf(m -> m.uid().equals(a.uid()));
      members.add(a);
    });
    return members.isEmpty() ? new GangStatus.Waiting(0, 0) : GangStatus.of(members, policies.get().topology().replicaLabel());
  }

  private void remove(String uid) {
    var old = byUid.remove(uid);
    if (old != null) {
      var members = byGang.get(old.gang());
      members.remove(uid);
      if (members.isEmpty()) {
        byGang.remove(old.gang());
      }
    }
  }
}
