package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.gpuadmission.policy.PolicyStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The pods.validate match condition follows topology.jobLabel on an API server that encodes and
 * patches as kube-apiserver does ({@link GoEncodingApiServer}); failures say what the API server
 * answered, and name RBAC only when it refused the call.
 */
class WebhookConditionSyncTest {
  private static final String SHIPPED =
      "has(object.spec.containers) || (has(object.metadata.labels) && 'gpu-topology' in object.metadata.labels)";
  private static final String CONSEQUENCE = "; pods carrying it that ask for no GPU are not validated until the condition names it";

  private final ArrayList<GoEncodingApiServer> handle = new ArrayList<>();
  private KubernetesMockServer server;
  private GoEncodingApiServer apiServer;
  private KubernetesClient client;
  private WebhookConditionSync sync;

  @BeforeEach
  void shippedConfiguration() throws IOException {
    server = GoEncodingApiServer.start(handle);
    apiServer = handle.get(0);
    // No client-side retries: a refusal reaches the sync as the API server sent it.
    client = server.createClient(b -> b.editOrNewConfig().withRequestRetryBackoffLimit(0).endConfig());
    // Read as typed objects: client.load's polymorphic reading costs seconds of class loading.
    var yaml = new com.fasterxml.jackson.dataformat.yaml.YAMLMapper();
    try (var documents = yaml.readerFor(com.fasterxml.jackson.databind.JsonNode.class).readValues(Files.readString(Path.of("manifests/base/webhooks.yaml")))) {
      while (documents.hasNext()) {
        var document = (com.fasterxml.jackson.databind.JsonNode) documents.next();
        if ("ValidatingWebhookConfiguration".equals(document.path("kind").asText())) {
          client.resource(io.gpuadmission.admission.KubernetesJson.mapper().convertValue(document, ValidatingWebhookConfiguration.class)).create();
        }
      }
    }
    sync = new WebhookConditionSync(new ClusterConnection(client, Optional.of(true), Optional.empty()), new PolicyStore(), "gpu-admission", Duration.ofSeconds(60));
  }

  @AfterEach
  void stop() {
    client.close();
    server.destroy();
  }

  @Test
  void replacesTheOneLabelTheConditionTests() {
    assertThat(WebhookConditionSync.withLabel(SHIPPED, "train.example.com/gang"))
        .contains("has(object.spec.containers) || (has(object.metadata.labels) && 'train.example.com/gang' in object.metadata.labels)");
  }

  @Test
  void leavesAloneAConditionThatTestsNoLabelOrSeveral() {
    assertThat(WebhookConditionSync.withLabel("object.metadata.name == 'x'", "a")).isEmpty();
    assertThat(WebhookConditionSync.withLabel("'a' in object.metadata.labels || 'b' in object.metadata.labels", "c")).isEmpty();
  }

  /** The mock itself: a test of the shipped text fails as sent, and passes with Go's escape (as the issue found). */
  @Test
  void theMockApiServerComparesTestValuesAsKubeApiserverDoes() {
    var path = "/webhooks/" + podsValidate() + "/matchConditions/0/expression";
    var expression = expression();
    var asSent = "[{\"op\":\"test\",\"path\":\"" + path + "\",\"value\":" + json(expression) + "}]";
    var asGoWritesIt = "[{\"op\":\"test\",\"path\":\"" + path + "\",\"value\":" + GoEncodingApiServer.encodeGo(new ObjectMapper().valueToTree(expression)) + "}]";
    assertThat(expression).contains("&&");

    assertThatThrownBy(() -> configuration().patch(PatchContext.of(PatchType.JSON), asSent))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(422);
          assertThat(e.getStatus().getDetails().getCauses().get(0).getMessage()).isEqualTo("testing value " + path + " failed: test failed");
        });
    assertThat(asGoWritesIt).contains("\\u0026\\u0026");
    configuration().patch(PatchContext.of(PatchType.JSON), asGoWritesIt);
  }

  @Test
  void namesTheJobLabelInTheShippedConditionWithoutTestingItsText() throws IOException {
    var shipped = expression();
    var resourceVersion = configuration().get().getMetadata().getResourceVersion();

    assertThat(sync.sync("my-gang")).isEqualTo(WebhookConditionSync.Outcome.NAMED);

    assertThat(expression()).isEqualTo(WebhookConditionSync.withLabel(shipped, "my-gang").orElseThrow()).contains("'my-gang' in object.metadata.labels");
    var expected =
        "[{\"op\":\"add\",\"path\":\"/metadata/resourceVersion\",\"value\":\"" + resourceVersion + "\"},"
            + "{\"op\":\"replace\",\"path\":\"/webhooks/" + podsValidate() + "/matchConditions/0/expression\",\"value\":"
            + json(expression()) + "}]";
    assertThat(apiServer.patches()).hasSize(1);
    assertThat(new ObjectMapper().readTree(apiServer.patches().get(0))).isEqualTo(new ObjectMapper().readTree(expected));
    // Already in force: nothing sent.
    assertThat(sync.sync("my-gang")).isEqualTo(WebhookConditionSync.Outcome.NAMED);
    assertThat(apiServer.patches()).hasSize(1);
  }

  @Test
  void readsAgainAndPatchesWhenTheConfigurationChangedSinceItWasRead() {
    apiServer.beforeNextPatch(() -> apiServer.mergePatch("gpu-admission", "{\"metadata\":{\"annotations\":{\"edited-by\":\"kubectl\"}}}"));

    assertThat(sync.sync("my-gang")).isEqualTo(WebhookConditionSync.Outcome.NAMED);

    assertThat(apiServer.patches()).hasSize(2);
    assertThat(expression()).contains("'my-gang' in object.metadata.labels");
    assertThat(configuration().get().getMetadata().getAnnotations()).containsEntry("edited-by", "kubectl");
  }

  @Test
  void namesRbacOnlyWhenTheApiServerRefusedTheCall() {
    var start = "could not set the job label my-gang in the match condition of webhook pods.validate.gpu-admission.io: ";

    apiServer.refusePatches(403, 1);
    assertThat(sync.sync("my-gang").problem())
        .isEqualTo(start + "the API server refused to patch ValidatingWebhookConfiguration gpu-admission (403: refused by the test);"
            + " grant the webhook's ServiceAccount get and patch on validatingwebhookconfigurations/gpu-admission, or edit the"
            + " condition by hand" + CONSEQUENCE);

    apiServer.refusePatches(503, 1);
    assertThat(sync.sync("my-gang").problem())
        .isEqualTo(start + "the API server answered 503 to the patch of ValidatingWebhookConfiguration gpu-admission"
            + " (refused by the test); trying again in PT1M" + CONSEQUENCE);

    apiServer.refusePatches(422, 1);
    assertThat(sync.sync("my-gang").problem())
        .isEqualTo(start + "the API server refused the new condition (422: refused by the test); edit it by hand" + CONSEQUENCE);

    apiServer.refusePatches(409, 3);
    assertThat(sync.sync("my-gang").problem())
        .isEqualTo(start + "ValidatingWebhookConfiguration gpu-admission changed under each of 3 attempts to patch it"
            + " (409: refused by the test); trying again in PT1M" + CONSEQUENCE);

    assertThat(expression()).contains("'gpu-topology' in object.metadata.labels");
    assertThat(sync.sync("my-gang")).isEqualTo(WebhookConditionSync.Outcome.NAMED);
  }

  @Test
  void saysWhenTheApiServerDoesNotAnswer() {
    var config = new io.fabric8.kubernetes.client.ConfigBuilder().withMasterUrl("http://127.0.0.1:1").withRequestRetryBackoffLimit(0).build();
    try (var unreachable = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(config).build()) {
      var away = new WebhookConditionSync(new ClusterConnection(unreachable, Optional.of(true), Optional.empty()), new PolicyStore(), "gpu-admission", Duration.ofSeconds(60));

      assertThat(away.sync("my-gang").problem())
          .startsWith("could not set the job label my-gang in the match condition of webhook pods.validate.gpu-admission.io:"
              + " no answer from the API server (")
          .endsWith("); trying again in PT1M" + CONSEQUENCE)
          .doesNotContain("ServiceAccount");
    }
  }

  private io.fabric8.kubernetes.client.dsl.Resource<ValidatingWebhookConfiguration> configuration() {
    return client.admissionRegistration().v1().validatingWebhookConfigurations().withName("gpu-admission");
  }

  private int podsValidate() {
    var webhooks = configuration().get().getWebhooks();
    for (int w = 0; w < webhooks.size(); w++) {
      if (webhooks.get(w).getName().equals(WebhookConditionSync.WEBHOOK)) {
        return w;
      }
    }
    throw new AssertionError("no webhook " + WebhookConditionSync.WEBHOOK);
  }

  private String expression() {
    return configuration().get().getWebhooks().get(podsValidate()).getMatchConditions().get(0).getExpression();
  }

  private static String json(String text) {
    return new ObjectMapper().valueToTree(text).toString();
  }
}
