package io.gpuadmission.cli;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.zjsonpatch.JsonPatch;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import io.gpuadmission.support.Reviews;
import io.gpuadmission.validation.WorkloadKind;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The command line gives the verdict, patch, warnings and messages /mutate and /validate give,
 * for every Pod and workload among the repository's fixtures: each goes through {@code explain
 * -o json} and, as the AdmissionReview kube-apiserver sends, over HTTPS to this app's /mutate and
 * then (the mutated pod, as the API server applies the patch) /validate. Both sides see the
 * built-in policy and no cluster. The HTTP reviews are dry runs, so no member is left in the
 * gang ledger of the app the other tests share; a dry run is judged the same.
 */
@QuarkusTest
class CliWebhookEquivalenceTest {
  private static final String NAMESPACE = "cli-equivalence";
  private static final List<String> DIRECTORIES = List.of("mutation", "workloads", "gang", "extender", "placement", "cel", "manifests", "cluster", "cli");

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @Inject CommandLine.IFactory factory;

  @Test
  void everyFixtureGetsTheSameAnswerFromTheCommandLineAsFromTheWebhook() throws IOException {
    var objects = fixtureObjects();
    assertThat(objects).as("fixture objects").hasSizeGreaterThan(100);
    var refused = 0;
    var patched = 0;
    var malformed = 0;
    for (var object : objects) {
      var namespaced = withNamespace(object.object());
      var file = Files.createTempFile("object", ".json");
      Files.writeString(file, namespaced.toString());
      var run = CommandRun.of(factory, "explain", "-o", "json", "-f", file.toString());
      var isPod = object.object().path("kind").asText().equals("Pod");
      if (isPod && run.exitCode() == GpuAdmissionCommand.BAD_INPUT) {
        // A field of the wrong type: the webhook's 400 and the command line's bad input say the same.
        var status = tree(given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON)
            .body(Reviews.of("gpu-admission-cli-1", "CREATE", namespaced, true)).post("/mutate").then().statusCode(400).extract().asString());
        assertThat(run.stderr()).as(object.name()).startsWith("gpu-admission: bad input: " + file + ", document 1")
            .endsWith(": " + status.path("message").asText() + "\n");
        malformed++;
        continue;
      }
      assertThat(run.stderr()).as(object.name()).isEmpty();
      var cli = tree(run.stdout()).path("objects").get(0);
      var validated = namespaced;
      if (isPod) {
        var mutate = post("/mutate", namespaced, "gpu-admission-cli-1");
        assertThat(answer(mutate, true)).as(object.name() + ": /mutate").isEqualTo(cli.path("mutate"));
        var patch = patchOf(mutate);
        patched += patch.isEmpty() ? 0 : 1;
        validated = Boolean.TRUE.equals(mutate.path("allowed").asBoolean()) && !patch.isEmpty() ? JsonPatch.apply(patch, namespaced) : namespaced;
        if (!mutate.path("allowed").asBoolean()) {
          assertThat(cli.has("validate")).as(object.name() + ": the API server stops at /mutate's refusal").isFalse();
          refused++;
          continue;
        }
      }
      var validate = post("/validate", validated, isPod ? "gpu-admission-cli-2" : "gpu-admission-cli-1");
      assertThat(answer(validate, false)).as(object.name() + ": /validate").isEqualTo(cli.path("validate"));
      var admitted = validate.path("allowed").asBoolean();
      refused += admitted ? 0 : 1;
      assertThat(cli.path("verdict").asText()).as(object.name()).isEqualTo(admitted ? "admitted" : "refused");
    }
    // Both kinds of answer are compared, not only easy ones.
    assertThat(refused).isGreaterThan(10);
    assertThat(patched).isGreaterThan(20);
    assertThat(malformed).as("pods with a field of the wrong type (reviews/pod-*-malformed-field)").isEqualTo(2);
  }

  /** A fixture object and where it comes from. */
  private record Fixture(String name, JsonNode object) {}

  /** Every Pod and workload in the fixture directories (Lists expanded), and the objects of the review fixtures. */
  private static List<Fixture> fixtureObjects() throws IOException {
    var out = new ArrayList<Fixture>();
    var reader = new ManifestReader(System.in);
    for (var directory : DIRECTORIES) {
      try (Stream<Path> files = Files.walk(Fixtures.path(directory))) {
        var yaml = files.filter(f -> f.toString().endsWith(".yaml") && !f.toString().contains("/expected/")).sorted().map(Path::toString).toList();
        for (var file : yaml) {
          var read = reader.read(List.of(file), false);
          for (var manifest : read.manifests()) {
            if (manifest.isCore("Pod") || WorkloadKind.of(manifest.group(), manifest.kind()).isPresent()) {
              out.add(new Fixture(manifest.source().shortName(), manifest.object()));
            }
          }
        }
      }
    }
    try (Stream<Path> files = Files.list(Fixtures.path("reviews"))) {
      for (var file : files.filter(f -> !f.toString().endsWith(".expected.json")).sorted().toList()) {
        var request = Fixtures.jsonTree(file).path("request");
        if (request.path("operation").asText().equals("CREATE") && request.path("object").isObject()) {
          out.add(new Fixture(file.toString(), request.path("object")));
        }
      }
    }
    return out;
  }

  /** The object as the API server passes it on: in its namespace, "default" when it names none. */
  /**
   * The object in a namespace of this test's own where it names none or "default" (the built-in
   * policy treats every such namespace alike): other classes of the app this one shares admit gang
   * members of the same fixtures in "default" (the fuzz tests, not as dry runs), and the webhook
   * rightly judges a new member against those for a while; the command line knows none of them.
   */
  private static JsonNode withNamespace(JsonNode object) {
    var copy = (ObjectNode) object.deepCopy();
    var namespace = copy.path("metadata").path("namespace").asText("");
    if (copy.path("metadata").isObject() && (namespace.isEmpty() || namespace.equals("default"))) {
      ((ObjectNode) copy.get("metadata")).put("namespace", NAMESPACE);
    }
    return copy;
  }

  /** The review the API server sends, with the UID the command line gave it (refusals name it). */
  private JsonNode post(String path, JsonNode object, String uid) {
    var body =
        given()
            .relaxedHTTPSValidation()
            .baseUri(base.toString())
            .contentType(ContentType.JSON)
            .body(Reviews.of(uid, "CREATE", object, true))
            .post(path)
            .then()
            .statusCode(200)
            .extract()
            .asByteArray();
    return tree(new String(body, java.nio.charset.StandardCharsets.UTF_8)).path("response");
  }

  /**
   * The webhook's answer in the command line's JSON form: its patch decoded (an admission by
   * /mutate without one as the empty patch), no warnings as [].
   */
  private static JsonNode answer(JsonNode response, boolean mutate) {
    var out = KubernetesJson.mapper().createObjectNode();
    out.put("allowed", response.path("allowed").asBoolean());
    if (response.has("patch") || (mutate && response.path("allowed").asBoolean())) {
      out.set("patch", patchOf(response));
    }
    var warnings = out.putArray("warnings");
    response.path("warnings").forEach(warnings::add);
    if (response.has("status")) {
      var status = response.path("status");
      out.putObject("status").put("code", status.path("code").asInt()).put("reason", status.path("reason").asText()).put("message", status.path("message").asText());
    }
    return out;
  }

  private static ArrayNode patchOf(JsonNode response) {
    if (!response.has("patch")) {
      return KubernetesJson.mapper().createArrayNode();
    }
    return (ArrayNode) tree(new String(Base64.getDecoder().decode(response.path("patch").asText()), java.nio.charset.StandardCharsets.UTF_8));
  }

  private static JsonNode tree(String json) {
    try {
      return KubernetesJson.mapper().readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
