package io.gpuadmission.admission;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.io.IOException;
import java.net.URL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A pod the rules cannot read (a null entry in one of its lists: {@code containers: [null]}, {@code
 * tolerations: [null]}, {@code env: [.., null]}; no metadata or spec) is refused by both endpoints
 * saying where, before any rule reads it, for GPU and CPU pods alike; never answered by the failure
 * mode as something that could not be judged.
 */
@QuarkusTest
class MalformedPodReviewTest {
  private static final String PROBLEM = " is null: an entry of a list cannot be empty (remove it, or give it its fields)";

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @ParameterizedTest(name = "{0} {1} {2}")
  @CsvSource({
    "mutate, /spec/containers/0, spec.containers[0]",
    "validate, /spec/containers/0, spec.containers[0]",
    "mutate, /spec/containers/0/env/1, spec.containers[0].env[1]",
    "validate, /spec/containers/0/env/1, spec.containers[0].env[1]",
    "mutate, /spec/tolerations/0, spec.tolerations[0]",
    "validate, /spec/tolerations/0, spec.tolerations[0]",
    "mutate, /metadata/ownerReferences/0, metadata.ownerReferences[0]",
  })
  void refusesAPodWithANullListEntrySayingWhere(String endpoint, String pointer, String where) throws IOException {
    var review = review("reviews/pod-topology-worker.json", "/request/object" + pointer);

    var response = post(endpoint, review);

    assertThat(response.path("uid").asText()).isEqualTo("3f0b7d5e-1c2a-4b8e-9d6f-0a1b2c3d4e5f");
    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("reason").asText()).isEqualTo("BadRequest");
    assertThat(response.path("status").path("message").asText()).isEqualTo("Pod \"pytorch-dist-nccl-worker-0\": " + where + PROBLEM);
  }

  /** Exempt namespaces are left alone by both endpoints, whatever their pods hold. */
  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"mutate", "validate"})
  void leavesAMalformedPodInAnExemptNamespaceAlone(String endpoint) throws IOException {
    var review = review("reviews/pod-topology-worker.json", "/request/object/spec/containers/0/env/1");
    ((ObjectNode) review.path("request")).put("namespace", "kube-system");
    ((ObjectNode) review.path("request").path("object").path("metadata")).put("namespace", "kube-system");

    var response = post(endpoint, review);

    assertThat(response.path("allowed").asBoolean()).isTrue();
    assertThat(response.has("patch")).isFalse();
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"mutate", "validate"})
  void refusesAReviewWhoseObjectIsNotAnObject(String endpoint) throws IOException {
    var review = Fixtures.jsonTree(Fixtures.path("reviews/pod-topology-worker.json")).deepCopy();
    ((ObjectNode) review.path("request")).put("object", "hello");

    var response = post(endpoint, review);

    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("reason").asText()).isEqualTo("BadRequest");
    assertThat(response.path("status").path("message").asText())
        .isEqualTo("Pod \"pytorch-dist-nccl-worker-0\": request.object is missing or not an object: a pod cannot be judged without it");
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({
    "mutate, metadata",
    "validate, metadata",
    "mutate, spec",
    "validate, spec",
  })
  void refusesAPodWithoutMetadataOrSpec(String endpoint, String field) throws IOException {
    var review = Fixtures.jsonTree(Fixtures.path("reviews/pod-topology-worker.json")).deepCopy();
    ((ObjectNode) review.path("request").path("object")).put(field, "none");

    var response = post(endpoint, review);

    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("reason").asText()).isEqualTo("BadRequest");
    assertThat(response.path("status").path("message").asText())
        .isEqualTo("Pod \"pytorch-dist-nccl-worker-0\": " + field + " is missing or not an object: a pod cannot be judged without it");
  }

  /**
   * kube-apiserver cannot decode a pod whose quantity is no quantity, so only another client sends
   * one: both endpoints refuse it alike, naming the container, the resource and the value (neither
   * patches it nor answers "could not judge"), also a string fabric8's own parser throws on
   * ({@code 1e3k}).
   */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"mutate, lots", "validate, lots", "mutate, 1e3k", "validate, 1e3k", "validate, 1E3Ki"})
  void refusesAPodWhoseQuantityIsNoQuantityNamingWhere(String endpoint, String value) throws IOException {
    var review = Fixtures.jsonTree(Fixtures.path("reviews/pod-topology-worker.json")).deepCopy();
    ((ObjectNode) review.at("/request/object/spec/containers/0/resources/limits")).put("aliyun.com/gpu-mem", value);

    var response = post(endpoint, review);

    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.has("patch")).isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(403);
    assertThat(response.path("status").path("reason").asText()).isEqualTo("BadRequest");
    assertThat(response.path("status").path("message").asText()).isEqualTo("Pod \"pytorch-dist-nccl-worker-0\": container \"pytorch\":"
        + " resources.limits[\"aliyun.com/gpu-mem\"] is \"" + value + "\", not a quantity (a quantity is a number with an optional suffix,"
        + " such as 2, 500m, 16Gi or 1e3)");
  }

  /** A CREATE or UPDATE without its object is no review kube-apiserver sends: 400 with the reason. */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"mutate, CREATE", "validate, CREATE", "validate, UPDATE"})
  void refusesACreateOrUpdateWithoutItsObjectWith400(String endpoint, String operation) {
    var review = Fixtures.jsonTree(Fixtures.path("reviews/pod-topology-worker.json")).deepCopy();
    ((ObjectNode) review.path("request")).put("operation", operation).putNull("object");

    var answer = given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON).body(review.toString())
        .post("/" + endpoint).then().statusCode(400).extract().asString();

    assertThat(answer).isEqualTo("{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"code\":400,\"message\":\"request.object is "
        + "missing: a " + operation + " review carries the object\",\"reason\":\"BadRequest\",\"status\":\"Failure\"}");
  }

  @Test
  void refusesAWorkloadWhosePodTemplateHasNoSpec() throws IOException {
    var review = Fixtures.jsonTree(Fixtures.path("reviews/deployment-tf-notebook.json")).deepCopy();
    ((ObjectNode) review.at("/request/object/spec/template")).remove("spec");

    var response = post("validate", review);

    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("message").asText())
        .isEqualTo("Deployment \"tf-notebook\": spec.template.spec is missing or not an object: a pod cannot be judged without it");
  }

  @Test
  void refusesAWorkloadWhosePodTemplateHasANullListEntry() throws IOException {
    var review = review("reviews/deployment-tf-notebook.json", "/request/object/spec/template/spec/containers/0/env/0");
    var name = review.path("request").path("name").asText(review.path("request").path("object").path("metadata").path("name").asText());

    var response = post("validate", review);

    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("message").asText())
        .isEqualTo("Deployment \"" + name + "\": spec.template.spec.containers[0].env[0]" + PROBLEM);
  }

  /** The fixture review with the list entry at {@code pointer} set to null (added when the list is empty). */
  private static JsonNode review(String fixture, String pointer) {
    var review = Fixtures.jsonTree(Fixtures.path(fixture)).deepCopy();
    var at = JsonPointer.compile(pointer);
    var parent = review.at(at.head());
    var index = Integer.parseInt(at.last().getMatchingProperty());
    if (parent.isMissingNode()) {
      var list = ((ObjectNode) review.at(at.head().head())).putArray(at.head().last().getMatchingProperty());
      list.addNull();
    } else if (parent.size() <= index) {
      ((ArrayNode) parent).addNull();
    } else {
      ((ArrayNode) parent).setNull(index);
    }
    return review;
  }

  /**
   * A field of the wrong JSON type (which kube-apiserver, decoding the object first, never sends)
   * makes the review malformed: a 400 saying which field had what, not "could not judge" and
   * the failure mode.
   */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(delimiter = '|', value = {
    "mutate   | /spec/hostIPC                        | \"yes\" | spec.hostIPC: expected true or false, got the string \"yes\"",
    "validate | /spec/hostIPC                        | \"yes\" | spec.hostIPC: expected true or false, got the string \"yes\"",
    "mutate   | /spec/containers                     | [3]     | spec.containers[0]: expected a Container object, got the number 3",
    "validate | /spec/containers/0/resources/limits  | []      | spec.containers[0].resources.limits: expected an object, got an array",
  })
  void aPodFieldOfTheWrongTypeIsA400NamingTheField(String endpoint, String pointer, String value, String problem) throws IOException {
    var review = Fixtures.jsonTree(Fixtures.path("reviews/pod-topology-worker.json")).deepCopy();
    var at = JsonPointer.compile("/request/object" + pointer);
    ((ObjectNode) review.at(at.head())).set(at.last().getMatchingProperty(), KubernetesJson.mapper().readTree(value));

    var body = given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON).body(review.toString())
        .post("/" + endpoint).then().statusCode(400).extract().asByteArray();

    var status = KubernetesJson.mapper().readTree(body);
    assertThat(status.path("reason").asText()).isEqualTo("BadRequest");
    assertThat(status.path("code").asInt()).isEqualTo(400);
    assertThat(status.path("message").asText()).isEqualTo("Pod \"pytorch-dist-nccl-worker-0\": " + problem);
  }

  /**
   * The same inside a workload's pod template, for every kind /validate judges: a 400 naming the
   * field from the object's root, never the failure mode's "could not judge".
   */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(delimiter = '|', value = {
    "deployment-share-notebook.yaml        | /spec/template/spec/hostIPC                                      | \"yes\" | Deployment \"notebook\": spec.template.spec.hostIPC: expected true or false, got the string \"yes\"",
    "statefulset-topology-replica-mismatch.yaml | /spec/template/spec/containers                          | [3]     | StatefulSet \"llm-train\": spec.template.spec.containers[0]: expected a Container object, got the number 3",
    "job-topology-completions.yaml         | /spec/template/spec/containers/0/resources/limits                | []      | Job \"eval-sweep\": spec.template.spec.containers[0].resources.limits: expected an object, got an array",
    "pytorchjob-consistent.yaml            | /spec/pytorchReplicaSpecs/Worker/template/spec/hostNetwork       | \"on\"  | PyTorchJob \"pytorch-dist-nccl\": spec.pytorchReplicaSpecs.Worker.template.spec.hostNetwork: expected true or false, got the string \"on\"",
    "tfjob-ps-without-gpu.yaml             | /spec/tfReplicaSpecs/Worker/template/spec/containers             | [3]     | TFJob \"tf-ps-resnet\": spec.tfReplicaSpecs.Worker.template.spec.containers[0]: expected a Container object, got the number 3",
    "mpijob-launcher-as-worker.yaml        | /spec/mpiReplicaSpecs/Launcher/template/metadata/labels          | []      | MPIJob \"horovod-bert\": spec.mpiReplicaSpecs.Launcher.template.metadata.labels: expected an object, got an array",
  })
  void aTemplateFieldOfTheWrongTypeIsA400NamingTheFieldFromTheRoot(String fixture, String pointer, String value, String message)
      throws IOException {
    var object = Fixtures.yamlTree(Fixtures.path("workloads/" + fixture)).deepCopy();
    var at = JsonPointer.compile(pointer);
    ((ObjectNode) object.at(at.head())).set(at.last().getMatchingProperty(), KubernetesJson.mapper().readTree(value));

    var body = given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON)
        .body(io.gpuadmission.support.Reviews.create("template-field-type", object)).post("/validate").then().statusCode(400).extract().asString();

    assertThat(body).isEqualTo("{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"code\":400,\"message\":"
        + KubernetesJson.mapper().writeValueAsString(message) + ",\"reason\":\"BadRequest\",\"status\":\"Failure\"}");
  }

  /**
   * A quantity that is no quantity inside a workload's pod template gets the Pod's answer (refused
   * as BadRequest naming the container, the resource and the value), the container named from the
   * object's root, never the failure mode's "could not judge".
   */
  @ParameterizedTest(name = "{0} {1} {2}")
  @CsvSource(delimiter = '|', value = {
    "deployment-share-notebook.yaml | /spec/template/spec/containers/0/resources/limits                     | lots | Deployment \"notebook\": spec.template.spec.containers[0].resources.limits[\"aliyun.com/gpu-mem\"] of container \"jupyter\"",
    "deployment-share-notebook.yaml | /spec/template/spec/containers/0/resources/requests                   | 1e3k | Deployment \"notebook\": spec.template.spec.containers[0].resources.requests[\"aliyun.com/gpu-mem\"] of container \"jupyter\"",
    "job-topology-completions.yaml  | /spec/template/spec/containers/0/resources/limits                     | 1e3k | Job \"eval-sweep\": spec.template.spec.containers[0].resources.limits[\"aliyun.com/gpu-mem\"] of container \"eval\"",
    "pytorchjob-consistent.yaml     | /spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/resources/limits | lots | PyTorchJob \"pytorch-dist-nccl\": spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resources.limits[\"aliyun.com/gpu-mem\"] of container \"pytorch\"",
    "pytorchjob-consistent.yaml     | /spec/pytorchReplicaSpecs/Master/template/spec/containers/0/resources/limits | 1E3Ki | PyTorchJob \"pytorch-dist-nccl\": spec.pytorchReplicaSpecs.Master.template.spec.containers[0].resources.limits[\"aliyun.com/gpu-mem\"] of container \"pytorch\"",
  })
  void refusesATemplateWhoseQuantityIsNoQuantityNamingWhereFromTheRoot(String fixture, String pointer, String value, String where)
      throws IOException {
    var object = Fixtures.yamlTree(Fixtures.path("workloads/" + fixture)).deepCopy();
    var resources = (ObjectNode) object.at(JsonPointer.compile(pointer).head());
    if (!resources.has(JsonPointer.compile(pointer).last().getMatchingProperty())) {
      resources.putObject(JsonPointer.compile(pointer).last().getMatchingProperty());
    }
    ((ObjectNode) object.at(pointer)).put("aliyun.com/gpu-mem", value);

    var response = post("validate", KubernetesJson.mapper().readTree(io.gpuadmission.support.Reviews.create("template-quantity", object)));

    assertThat(response.path("allowed").asBoolean()).isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(403);
    assertThat(response.path("status").path("reason").asText()).isEqualTo("BadRequest");
    assertThat(response.path("status").path("message").asText()).isEqualTo(where + " is \"" + value + "\", not a quantity (a quantity is a"
        + " number with an optional suffix, such as 2, 500m, 16Gi or 1e3)");
  }

  /** The review fixtures of pods with a field of the wrong type: each endpoint's whole 400 answer. */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"mutate, pod-gpu-malformed-field", "validate, pod-gpu-malformed-field", "mutate, pod-cpu-malformed-field",
      "validate, pod-cpu-malformed-field"})
  void answersTheMalformedFieldFixturesWithTheirStatus(String endpoint, String fixture) throws IOException {
    var body = given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON)
        .body(Fixtures.text(Fixtures.path("reviews/" + fixture + ".json"))).post("/" + endpoint).then().statusCode(400).extract().asByteArray();

    assertThat(KubernetesJson.mapper().readTree(body)).isEqualTo(Fixtures.jsonTree(Fixtures.path("reviews/" + fixture + ".expected.json")));
  }

  private JsonNode post(String endpoint, JsonNode review) throws IOException {
    var body = given().relaxedHTTPSValidation().baseUri(base.toString()).contentType(ContentType.JSON).body(review.toString())
        .post("/" + endpoint).then().statusCode(200).extract().asByteArray();
    return KubernetesJson.mapper().readTree(body).path("response");
  }
}
