package io.gpuadmission.manifests;

import io.gpuadmission.support.SchedulerCaller;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterFixtures;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.WebhookCalls;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Least privilege, derived from what the service really asks the API server: the app runs against
 * the mock API server and goes through everything that calls it (informers, leader election, a
 * bind, a gang's plan and its Events, a policy change its webhook condition follows, an invalid policy's Event, creating,
 * injecting and renewing its own certificate); every request it sent is recorded. The RBAC that
 * `kubectl apply -k manifests` installs for its ServiceAccount must allow each of those requests
 * and grant nothing none of them used. Recording, not scanning the source: a fabric8 call such as
 * {@code runnableInformer} or {@code LeaderElector} becomes list, watch, get, create, update or
 * patch requests that no reading of the source shows reliably. The test's own writes carry a
 * header and are left out.
 */
@QuarkusTest
@TestProfile(LeastPrivilegeTest.SelfManaged.class)
@WithKubernetesTestServer(crud = true, setup = LeastPrivilegeTest.Cluster.class)
class LeastPrivilegeTest {
  private static final String MARK = "X-Least-Privilege-Test";
  private static final String NAMESPACE = "gpu-admission";

  /** Self-managed certificates (the base install), synced every half second. */
  public static final class SelfManaged implements QuarkusTestProfile {
    @Override
    public Map<String, String> getConfigOverrides() {
      return Map.of("gpu-admission.tls.self-managed", "true", "gpu-admission.tls.sync-period", "500ms");
    }
  }

  /** The fixture cluster and both webhook configurations; what setting them up sent is not the app's. */
  public static final class Cluster implements Consumer<KubernetesServer> {
    @Override
    public void accept(KubernetesServer server) {
      new ClusterFixtures().accept(server);
      try (var manifest = Files.newInputStream(Path.of("manifests/base/webhooks.yaml"))) {
        for (var item : server.getClient().load(manifest).items()) {
          if (item instanceof io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration) {
            server.getClient().resource(item).create();
          }
        }
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      try {
        while (server.getKubernetesMockServer().takeRequest(1, TimeUnit.MILLISECONDS) != null) {
          // the app has not started yet: every request so far was the setup's
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @KubernetesTestServer KubernetesServer server;
  @Inject GpuLedger ledger;
  @Inject LeaderGate gate;

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Test
  void rbacGrantsExactlyTheRequestsTheServiceMakes() throws Exception {
    try (var test = markedClient()) {
      exerciseEveryCallPath(test);
    }
    var calls = recordedCalls();
    System.out.println("API calls of the service:\n  " + String.join("\n  ", new TreeSet<>(calls.stream().map(ApiCall::toString).toList())));

    // The same calls against the RBAC of both installs: kubectl apply -k and the Helm chart.
    for (var renderer : Overlays.Renderer.values()) {
      var grants = RbacGrant.of(renderer.objects("manifests"), NAMESPACE, "gpu-admission");
      var missing = new TreeSet<String>();
      calls.stream().filter(c -> grants.stream().noneMatch(g -> g.allows(c))).forEach(c -> missing.add(c.toString()));
      var unused = new TreeSet<String>();
      grants.stream().filter(g -> calls.stream().noneMatch(g::allows)).forEach(g -> unused.add(g.toString()));

      assertThat(missing).as("%s: requests the service makes that RBAC refuses", renderer).isEmpty();
      assertThat(unused).as("%s: grants no request of the service uses", renderer).isEmpty();
    }
  }

  private void exerciseEveryCallPath(KubernetesClient test) throws Exception {
    WebhookCalls.awaitReady(base);
    await().atMost(Duration.ofSeconds(30)).until(gate::leading);
    // kube-scheduler's client certificate, as the service issued it (self-managed, like this install).
    await().atMost(Duration.ofSeconds(30)).until(() -> test.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get() != null);
    var scheduler = SchedulerCaller.fromSecret(test.secrets().inNamespace(NAMESPACE).withName("gpu-scheduler-client").get());

    // A bind: read the pod, write the GPU annotations, create the Binding.
    var pod = test.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/pod-cgpu-test.yaml")), Pod.class)).create();
    await().atMost(Duration.ofSeconds(10)).until(() -> ledger.view("cn-beijing.i-cgpu-v100-a").isPresent());
    var args = Map.of("PodName", "cgpu-test", "PodNamespace", "default", "PodUID", pod.getMetadata().getUid(), "Node", "cn-beijing.i-cgpu-v100-a");
    SchedulerCaller.given(scheduler).baseUri(base.toString()).contentType(ContentType.JSON).body(KubernetesJson.mapper().writeValueAsString(args))
        .post("/extender/bind").then().statusCode(200).body("Error", org.hamcrest.Matchers.equalTo(""));

    // Preemption on the GPUs: a low-priority pod holds 8 of the M40's 11 GiB, a high-priority pod
    // asks 6. Filter refuses the node; the leader marks the victim, deletes it, nominates the node.
    var low = test.resource(preemptionPod("low-m40", 0, 8, "cn-beijing.i-2ze8o1a45qdv5q8a7luz")).create();
    var high = test.resource(preemptionPod("high-m40", 1000, 6, null)).create();
    await().atMost(Duration.ofSeconds(10)).until(() -> ledger.claim(low.getMetadata().getUid()).isPresent());
    var filterArgs = "{\"Pod\":" + KubernetesJson.mapper().writeValueAsString(high) + ",\"NodeNames\":[\"cn-beijing.i-2ze8o1a45qdv5q8a7luz\"]}";
    SchedulerCaller.given(scheduler).baseUri(base.toString()).contentType(ContentType.JSON).body(filterArgs)
        .post("/extender/filter").then().statusCode(200).body("NodeNames", org.hamcrest.Matchers.empty());
    await().atMost(Duration.ofSeconds(15)).until(() -> test.pods().inNamespace("default").withName("low-m40").get() == null
        && "cn-beijing.i-2ze8o1a45qdv5q8a7luz".equals(test.pods().inNamespace("default").withName("high-m40").get().getStatus().getNominatedNodeName()));

    // A gang: its plan written on both members, an Event on each in their own namespace.
    for (var role : List.of("master", "worker")) {
      test.resource(KubernetesJson.mapper().convertValue(Fixtures.yamlTree(Fixtures.path("extender/gang-" + role + ".yaml")), Pod.class)).create();
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> test.v1().events().inNamespace("ml-gang").list().getItems().stream()
        .filter(e -> "GangPlanned".equals(e.getReason())).count() == 2);

    // A policy whose topology job label the validating webhook's match condition must follow.
    var policies = test.configMaps().inNamespace(NAMESPACE);
    policies.resource(policy("topology:\n  jobLabel: training-gang\n")).create();
    await().atMost(Duration.ofSeconds(10)).until(() -> test.admissionRegistration().v1().validatingWebhookConfigurations()
        .withName("gpu-admission").get().toString().contains("training-gang"));
    // An invalid one: the last good policy stays, an Event says why.
    policies.resource(policy("topology:\n  allowedNamespaces: [Team_A]\n")).update();
    await().atMost(Duration.ofSeconds(10)).until(() -> test.v1().events().inNamespace(NAMESPACE).list().getItems().stream()
        .anyMatch(e -> "InvalidPolicy".equals(e.getReason())));

    // A Secret that holds no usable certificate any more: the service renews it.
    var secrets = test.secrets().inNamespace(NAMESPACE);
    var secret = secrets.withName("gpu-admission-tls").get();
    secrets.resource(new SecretBuilder(secret).withData(Map.of("tls.crt", Base64.getEncoder().encodeToString("broken".getBytes()))).build()).update();
    await().atMost(Duration.ofSeconds(10)).until(() -> secrets.withName("gpu-admission-tls").get().getData().containsKey("ca.key"));
  }

  /** Every request the mock API server received from the service, since it started. */
  private List<ApiCall> recordedCalls() throws InterruptedException {
    var calls = new ArrayList<ApiCall>();
    var mock = server.getKubernetesMockServer();
    for (var request = mock.takeRequest(100, TimeUnit.MILLISECONDS); request != null; request = mock.takeRequest(100, TimeUnit.MILLISECONDS)) {
      if (request.getHeader(MARK) == null) {
        ApiCall.of(request.getMethod(), request.getPath()).ifPresent(calls::add);
      }
    }
    return calls;
  }

  private KubernetesClient markedClient() {
    var config = new ConfigBuilder(server.getClient().getConfiguration()).withCustomHeaders(Map.of(MARK, "1")).build();
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  /** A share pod of {@code gib} GiB and {@code priority}, bound with its GPU annotations when {@code node} is set. */
  private static Pod preemptionPod(String name, int priority, int gib, String node) {
    var pod = new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
        .withNewSpec().withPriority(priority).withNodeName(node).addNewContainer().withName("c").withImage("cuda")
        .withNewResources().addToLimits("aliyun.com/gpu-mem", new io.fabric8.kubernetes.api.model.Quantity(Integer.toString(gib)))
        .endResources().endContainer().endSpec().withNewStatus().withPhase(node == null ? "Pending" : "Running").endStatus().build();
    if (node != null) {
      pod.getMetadata().setAnnotations(io.gpuadmission.contract.GpuAnnotations.share(0, gib, 11, java.time.Instant.now()));
    }
    return pod;
  }

  private static io.fabric8.kubernetes.api.model.ConfigMap policy(String yaml) {
    return new ConfigMapBuilder().withNewMetadata().withName("gpu-admission-policy").withNamespace(NAMESPACE).endMetadata()
        .addToData("policy.yaml", yaml).build();
  }
}
