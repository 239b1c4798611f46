package io.gpuadmission.realcluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.QuotaTreeWatcher;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.testing.PackagedApp;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What only a real kube-apiserver judges ({@link RealCluster}): every CRD the chart ships is
 * accepted, and one in a protected group without the approval annotation is refused; the packaged
 * server started without the ElasticQuotaTree CRD is Ready with quotas off and the reason, and
 * switches them on, without a restart, once the CRD is installed.
 */
@ExtendWith(RealCluster.Given.class)
class RealClusterIT {
  private static final String CRD = "elasticquotatrees.scheduling.sigs.k8s.io";
  private static final String NOT_SERVED = "the cluster does not serve ElasticQuotaTree (scheduling.sigs.k8s.io/v1beta1, resource"
      + " elasticquotatrees): no CRD elasticquotatrees.scheduling.sigs.k8s.io; checked again every 5 s, and used without a restart"
      + " once it is installed";

  @TempDir Path work;

  @Test
  void theApiServerAcceptsEveryShippedCrdAndRefusesOneInAProtectedGroupWithoutApproval() throws Exception {
    try (var admin = RealCluster.admin()) {
      var shipped = shippedCrds(admin);
      assertThat(shipped).extracting(c -> c.getMetadata().getName()).contains(CRD);
      for (var crd : shipped) {
        var existing = admin.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).get();
        if (existing == null) {
          admin.resource(crd).dryRun().create();
        } else {
          crd.getMetadata().setResourceVersion(existing.getMetadata().getResourceVersion());
          admin.resource(crd).dryRun().update();
        }
      }

      // The control: the same CRD under a name of its own, without the annotation.
      var unapproved = admin.getKubernetesSerialization().clone(shipped.stream().filter(c -> c.getMetadata().getName().equals(CRD)).findFirst()
          .orElseThrow());
      unapproved.getMetadata().setAnnotations(Map.of());
      unapproved.getMetadata().setName("gpuadmissionchecks.scheduling.sigs.k8s.io");
      unapproved.getSpec().getNames().setPlural("gpuadmissionchecks");
      unapproved.getSpec().getNames().setSingular("gpuadmissioncheck");
      unapproved.getSpec().getNames().setKind("GpuAdmissionCheck");
      unapproved.getSpec().getNames().setListKind("GpuAdmissionCheckList");
      assertThatThrownBy(() -> admin.resource(unapproved).dryRun().create())
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422))
          .hasMessageContaining("metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval"
              + " annotation \"api-approved.kubernetes.io\"");
    }
  }

  @Test
  void withoutTheQuotaCrdTheServerIsReadyWithQuotasOffAndSwitchesThemOnOnceItIsInstalled() throws Exception {
    try (var admin = RealCluster.admin()) {
      Assumptions.assumeTrue(admin.apiextensions().v1().customResourceDefinitions().withName(CRD).get() == null,
          "=== SKIPPED: the cluster given has the ElasticQuotaTree CRD already; this test installs it itself ===");
      var namespace = "gpu-admission-it-" + Long.toHexString(System.nanoTime() & 0xffffff);
      admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build()).create();
      var port = freePort();
      var env = Map.of("KUBECONFIG", RealCluster.kubeconfig().orElseThrow().toString(), "QUARKUS_HTTP_SSL_PORT", Integer.toString(port),
          "GPU_ADMISSION_POLICY_NAMESPACE", namespace);
      var started = System.nanoTime();
      try (var server = PackagedApp.start(Path.of("").toAbsolutePath(), env)) {
        var https = new ServerCalls(port);
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
          assertThat(server.alive()).as("the server exited:%n%s", server.stdout()).isTrue();
          return https.status("/q/health/ready") == 200;
        });
        System.out.printf("real cluster: Ready %.1f s after start without the ElasticQuotaTree CRD%n", (System.nanoTime() - started) / 1e9);
        var check = https.check("quota-tree");
        assertThat(check.path("status").asText()).isEqualTo("UP");
        assertThat(check.path("data").path("quotas").asText()).isEqualTo("off");
        assertThat(check.path("data").path("reason").asText()).isEqualTo(NOT_SERVED);
        assertThat(https.inspect().path("quotas").path("active").asBoolean()).isFalse();
        assertThat(https.inspect().path("quotas").path("reason").asText()).isEqualTo(NOT_SERVED);

        try (var crd = Files.newInputStream(Path.of("charts/gpu-admission/crds/elasticquotatrees.yaml"))) {
          admin.apiextensions().v1().customResourceDefinitions().load(crd).create();
        }
        try {
          var installed = System.nanoTime();
          await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
              .until(() -> https.check("quota-tree").path("data").path("quotas").asText().equals("on"));
          System.out.printf("real cluster: quotas on %.1f s after the CRD was created%n", (System.nanoTime() - installed) / 1e9);
          var tree = KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("quota/tree.yaml")), GenericKubernetesResource.class);
          admin.genericKubernetesResources(QuotaTreeWatcher.TREES).inNamespace("kube-system").resource(tree).create();
          await().atMost(Duration.ofSeconds(20)).until(() -> https.inspect().path("quotas").path("tree").asText().equals("kube-system/quotas"));
          assertThat(https.inspect().path("quotas").path("active").asBoolean()).isTrue();
        } finally {
          admin.apiextensions().v1().customResourceDefinitions().withName(CRD).delete();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> https.check("quota-tree").path("data").path("quotas").asText().equals("off"));
        assertThat(https.check("quota-tree").path("data").path("reason").asText()).isEqualTo(NOT_SERVED);
        assertThat(server.stdout()).doesNotContain("ERROR");
      } finally {
        admin.namespaces().withName(namespace).delete();
      }
    }
  }

  private static List<CustomResourceDefinition> shippedCrds(KubernetesClient admin) throws Exception {
    var crds = new ArrayList<CustomResourceDefinition>();
    try (var files = Files.list(Path.of("charts/gpu-admission/crds"))) {
      for (var file : files.sorted().toList()) {
        try (var in = Files.newInputStream(file)) {
          crds.add(admin.apiextensions().v1().customResourceDefinitions().load(in).item());
        }
      }
    }
    return crds;
  }

  private static int freePort() throws Exception {
    try (var socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** The server's endpoints over HTTPS: health as anyone, inspect as kube-scheduler (the dev certificates). */
  static final class ServerCalls {
    private final int port;

    ServerCalls(int port) {
      this.port = port;
    }

    int status(String path) {
      try {
        return io.gpuadmission.support.SchedulerCaller.given().baseUri("https://127.0.0.1:" + port).get(path).statusCode();
      } catch (Exception notYet) { // not listening yet (rest-assured throws ConnectException unchecked)
        return -1;
      }
    }

    JsonNode check(String name) throws Exception {
      var health = KubernetesJson.mapper().readTree(
          io.gpuadmission.support.SchedulerCaller.given().baseUri("https://127.0.0.1:" + port).get("/q/health/ready").asString());
      for (var check : health.path("checks")) {
        if (check.path("name").asText().equals(name)) {
          return check;
        }
      }
      throw new AssertionError("no check " + name + " in " + health);
    }

    /** Whether the server leads placement (its wellness check {@code placement}). */
    boolean leading() {
      try {
        var health = KubernetesJson.mapper().readTree(
            io.gpuadmission.support.SchedulerCaller.given().baseUri("https://127.0.0.1:" + port).get("/q/health/well").asString());
        for (var check : health.path("checks")) {
          if (check.path("name").asText().equals("placement")) {
            return check.path("data").path("leading").asBoolean();
          }
        }
        return false;
      } catch (Exception notYet) {
        return false;
      }
    }

    JsonNode inspect() throws Exception {
      return KubernetesJson.mapper().readTree(io.gpuadmission.support.SchedulerCaller.given().baseUri("https://127.0.0.1:" + port)
          .get("/extender/inspect").then().statusCode(200).extract().asString());
    }
  }
}
