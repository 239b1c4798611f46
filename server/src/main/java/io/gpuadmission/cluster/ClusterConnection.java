package io.gpuadmission.cluster;

import io.fabric8.kubernetes.client.KubernetesClient;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.File;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Decides whether there is a cluster to watch. Without one (no kubeconfig, not in a pod, no API
 * server URL configured) the informers are not started and their caches stay empty, so the
 * webhook still starts and answers.
 */
@ApplicationScoped
public class ClusterConnection {
  private static final Logger LOG = Logger.getLogger(ClusterConnection.class);
  private final KubernetesClient client;
  private final boolean available;

  public ClusterConnection(
      KubernetesClient client,
      @ConfigProperty(name = "gpu-admission.cluster.enabled") Optional<Boolean> forced,
      @ConfigProperty(name = "quarkus.kubernetes-client.api-server-url") Optional<String> apiServer) {
    this.client = client;
    this.available = available(forced, apiServer);
  }

  /**
   * Whether a cluster is meant: {@code gpu-admission.cluster.enabled} when set, else an API server
   * URL, fabric8's own settings, in-cluster, or a kubeconfig (the node agent asks it too, without CDI).
   */
  public static boolean available(Optional<Boolean> forced, Optional<String> apiServer) {
    return forced.orElseGet(() -> apiServer.isPresent() || detected());
  }

  public boolean available() {
    return available;
  }

  public KubernetesClient client() {
    return client;
  }

  private static boolean detected() {
    // fabric8's own explicit settings, then in-cluster, then a kubeconfig file.
    if (System.getProperty("kubernetes.master") != null
        || System.getenv("KUBERNETES_MASTER") != null
        || System.getenv("KUBERNETES_SERVICE_HOST") != null) {
      return true;
    }
    var kubeconfig = System.getenv("KUBECONFIG");
    if (kubeconfig != null && !kubeconfig.isBlank()) {
      // KUBECONFIG says a cluster is meant, even when it names no file that exists (a typo, a
      // volume not mounted): that cluster is then unreachable (not ready, GPU pods refused), never
      // "no cluster" with the built-in policy in force.
      for (var path : kubeconfig.split(File.pathSeparator)) {
        if (new File(path).isFile()) {
          return true;
        }
      }
      LOG.errorf("KUBECONFIG=%s names no file that exists: the cluster it means cannot be reached; not ready until it can", kubeconfig);
      return true;
    }
    return new File(System.getProperty("user.home"), ".kube/config").isFile();
  }
}
