package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import java.util.function.Consumer;

/** Creates the fixture nodes and namespaces in the mock API server before the app starts. */
public class ClusterFixtures implements Consumer<KubernetesServer> {
  @Override
  public void accept(KubernetesServer server) {
    var client = server.getClient();
    for (var file : new String[] {"cluster/nodes.yaml", "cluster/namespaces.yaml"}) {
      var list = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path(file)), KubernetesList.class);
      for (HasMetadata item : list.getItems()) {
        client.resource(item).create();
      }
    }
    if (withQuotaCrd()) {
      installQuotaCrd(client);
    }
    // The webhook configuration as shipped, whose pods.validate condition follows the policy's job label.
    try (var manifest = java.nio.file.Files.newInputStream(java.nio.file.Path.of("manifests/base/webhooks.yaml"))) {
      for (var item : client.load(manifest).items()) {
        if (item instanceof io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration) {
          client.resource(item).create();
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Whether the cluster serves ElasticQuotaTree from the start. */
  protected boolean withQuotaCrd() {
    return true;
  }

  /** The ElasticQuotaTree CRD as shipped (team quotas): the mock API server then serves its objects. */
  public static void installQuotaCrd(io.fabric8.kubernetes.client.KubernetesClient client) {
    try (var crd = java.nio.file.Files.newInputStream(java.nio.file.Path.of("manifests/crds/elasticquotatrees.yaml"))) {
      client.apiextensions().v1().customResourceDefinitions().load(crd).create();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The same cluster without the ElasticQuotaTree CRD (most clusters that use no quotas). */
  public static class WithoutQuotaCrd extends ClusterFixtures {
    @Override
    protected boolean withQuotaCrd() {
      return false;
    }
  }
}
