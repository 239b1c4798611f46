package io.gpuadmission.node;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.node.api.ApiServer;
import io.gpuadmission.node.api.ListWatch;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pods bound to one node, for that node's agent: one list and watch with a {@code
 * spec.nodeName} field selector (what the kubelet itself watches), each pod stripped to a {@link
 * NodePod}.
 */
public final class NodePods implements AutoCloseable {
  private final ApiServer api;
  private final Map<String, NodePod> byKey = new ConcurrentHashMap<>();
  /** Pod UID to the order in which this node's pods arrived (0: in the first list). */
  private final Map<String, Long> arrivals = new ConcurrentHashMap<>();
  private final AtomicLong arrived = new AtomicLong();
  private final ListWatch watch;
  /** Counts every pod added or changed; waiters on it are woken at each. */
  private long changes;

  private NodePods(ApiServer api, String node, Duration backoff) {
    this.api = api;
    this.watch = new ListWatch(api, "/api/v1/pods", "fieldSelector=" + ApiServer.encode("spec.nodeName=" + node), "pods of node " + node,
        new ListWatch.Handler() {
          @Override
          public void listed(List<JsonNode> items) {
            var before = new HashSet<>(byKey.keySet());
            for (var item : items) {
              var pod = NodePod.of(item);
              before.remove(pod.key());
              put(pod);
            }
            before.forEach(NodePods.this::remove);
            changed();
          }

          @Override
          public void added(JsonNode object) {
            put(NodePod.of(object));
            changed();
          }

          @Override
          public void modified(JsonNode object) {
            added(object);
          }

          @Override
          public void deleted(JsonNode object) {
            remove(NodePod.of(object).key());
          }
        }, backoff);
  }

  /** Starts watching without waiting for the first list; retries whatever fails, first after {@code backoff}. */
  public static NodePods start(ApiServer api, String node, Duration backoff) {
    var pods = new NodePods(api, node, backoff);
    pods.watch.start();
    return pods;
  }

  private void put(NodePod pod) {
    var old = byKey.put(pod.key(), pod);
    if (old != null && !old.uid().equals(pod.uid())) {
      arrivals.remove(old.uid());
    }
    // The kubelet watches the same pods with the same field selector: it admits what its first
    // list holds as one batch, then each pod as its watch brings it, in this same order.
    arrivals.putIfAbsent(pod.uid(), watch.synced() ? arrived.incrementAndGet() : 0L);
  }

  private void remove(String key) {
    var old = byKey.remove(key);
    if (old != null) {
      arrivals.remove(old.uid());
    }
  }

  /** Every pod the API server shows on this node, as stripped for the agent. */
  public List<NodePod> all() {
    return List.copyOf(byKey.values());
  }

  private synchronized void changed() {
    changes++;
    notifyAll();
  }

  /** How many times a pod was added or changed so far: what {@link #awaitChange} compares with. */
  public synchronized long changes() {
    return changes;
  }

  /**
   * Waits until a pod is added or changed after {@code seen} was read from {@link #changes}, at most
   * {@code timeout}; whether one was.
   */
  public synchronized boolean awaitChange(long seen, Duration timeout) throws InterruptedException {
    var deadline = System.nanoTime() + timeout.toNanos();
    while (changes == seen) {
      var left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  /** When the pod arrived on this node relative to the others: 0 for the first list, then 1, 2, ... */
  public long arrival(String uid) {
    return arrivals.getOrDefault(uid, Long.MAX_VALUE);
  }

  /** The pod as last seen, if the API server shows it. */
  public Optional<NodePod> get(String namespace, String name) {
    return Optional.ofNullable(byKey.get(namespace + "/" + name));
  }

  /** A JSON merge patch of the pod (the agent's RBAC grants patch, not get). */
  public void patch(NodePod pod, String mergePatch) {
    api.mergePatch("/api/v1/namespaces/" + pod.namespace() + "/pods/" + pod.name(), mergePatch);
  }

  public boolean synced() {
    return watch.synced();
  }

  @Override
  public void close() {
    watch.close();
  }
}
