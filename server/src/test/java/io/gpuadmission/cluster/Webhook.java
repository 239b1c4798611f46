package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.admission.MutationService;
import io.gpuadmission.admission.ValidationService;
import io.gpuadmission.policy.PolicyConfig;
import io.gpuadmission.policy.PolicyStatus;
import io.gpuadmission.policy.PolicyStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The webhook's cluster side and services wired by hand around one client, without Quarkus: the
 * same classes the application runs, so that a plain test can take its API server away.
 */
final class Webhook implements AutoCloseable {
  static final PolicyConfig POLICY_CONFIG =
      new PolicyConfig() {
        @Override
        public String configMapName() {
          return "gpu-admission-policy";
        }

        @Override
        public String key() {
          return "policy.yaml";
        }

        @Override
        public Optional<String> namespace() {
          return Optional.of("gpu-admission");
        }
      };

  final AtomicLong clock = new AtomicLong();
  final PolicyStore store = new PolicyStore();
  final PolicyStatus status = new PolicyStatus();
  final NodeInventory nodes;
  final PodInventory pods;
  final NamespaceInventory namespaces;
  final PolicyWatcher policyWatcher;
  final ClusterContact contact;
  final FirstSync firstSync;
  final MutationService mutation;
  final ValidationService validation;
  /** The informers other tests left running in this JVM, not this webhook's. */
  private final Set<SharedIndexInformer<?>> others;

  Webhook(KubernetesClient client) {
    var connection = new ClusterConnection(client, Optional.of(true), Optional.empty());
    var namespace = new WebhookNamespace(POLICY_CONFIG);
    nodes = new NodeInventory(connection, store);
    pods = new PodInventory(connection, store);
    namespaces = new NamespaceInventory(connection);
    policyWatcher = new PolicyWatcher(connection, POLICY_CONFIG, namespace, store, status);
    others = Set.copyOf(Informers.running());
    nodes.start(null);
    pods.start(null);
    namespaces.start(null);
    policyWatcher.start(null);
    // Only the informers started here: an application of another test may still run in this JVM.
    contact = new ClusterContact(connection, clock::get, this::informers);
    firstSync = new FirstSync(connection, store, this::informers, List::of, System::nanoTime);
    var metrics = new AdmissionMetrics(new SimpleMeterRegistry());
    mutation = new MutationService(store, nodes, metrics);
    validation =
        new ValidationService(store, mutation, POLICY_CONFIG, namespace, new InformerClusterView(nodes, pods, namespaces),
            nodes, pods, new QuotaTreeStore(), metrics, Duration.ofSeconds(15));
  }

  /** The informers this webhook started and has not stopped. */
  List<SharedIndexInformer<?>> informers() {
    return Informers.running().stream().filter(i -> !others.contains(i)).toList();
  }

  /**
   * True once each of its informers has seen a list or watch fail: what its health and refusals
   * say about the last attempt then names every informer's, not only the first one to fail.
   */
  boolean everyInformerFailed() {
    var mine = informers();
    return !mine.isEmpty() && mine.stream().allMatch(informer -> !Informers.lastFailure(informer).isEmpty());
  }

  /** One run of the contact check after the clock moved on by {@code seconds}. */
  boolean connectedAfter(long seconds) {
    clock.addAndGet(seconds * 1_000_000_000L);
    contact.check();
    return contact.connected();
  }

  @Override
  public void close() {
    nodes.stop(null);
    pods.stop(null);
    namespaces.stop(null);
    policyWatcher.stop(null);
  }
}
