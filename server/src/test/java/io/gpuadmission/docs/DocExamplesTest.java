package io.gpuadmission.docs;

import io.gpuadmission.support.SchedulerCaller;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The requests the README and docs/ show, run against the server as written there (the same
 * fixture file, the same path), with the answer compared to the one the page prints; or, for an
 * example taken on a cluster, compared to the fixture the page says it shows. Each example is
 * marked {@code <!-- doc-example: NAME -->} before its code blocks; every curl in the pages must
 * be one, so a new example cannot go unchecked. Default profile: no restart beyond the other
 * default-profile classes'.
 */
@QuarkusTest
class DocExamplesTest {
  private static final Pattern MARKER = Pattern.compile("<!-- doc-example: ([\\w-]+) -->\\n");
  private static final Pattern DATA = Pattern.compile("--data-binary @(\\S+)");
  private static final Pattern URL_PATH = Pattern.compile("https://localhost:8443(/\\S*)");
  private static final ObjectMapper JSON = new ObjectMapper();

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  private record Example(Path page, String name, String command, List<String> answers) {
    String file() {
      var m = DATA.matcher(command);
      return m.find() ? m.group(1) : null;
    }

    String path() {
      var m = URL_PATH.matcher(command);
      assertThat(m.find()).as(page + " " + name + ": a request to https://localhost:8443").isTrue();
      return m.group(1);
    }
  }

  private static List<Example> examples() {
    var examples = new ArrayList<Example>();
    for (var page : DocPages.all()) {
      var text = DocPages.text(page);
      var m = MARKER.matcher(text);
      while (m.find()) {
        var blocks = DocPages.codeBlocks(text.substring(m.end()));
        examples.add(new Example(page, m.group(1), blocks.get(0), blocks.subList(1, Math.min(3, blocks.size()))));
      }
    }
    return examples;
  }

  @Test
  void everyRequestInThePagesIsACheckedExample() {
    var unmarked = new ArrayList<String>();
    for (var page : DocPages.all()) {
      var text = DocPages.text(page);
      var marked = examples().stream().filter(e -> e.page().equals(page)).map(Example::command).toList();
      for (var block : DocPages.codeBlocks(text)) {
        if (block.contains("curl ") && block.contains("https://localhost:8443") && !marked.contains(block)) {
          unmarked.add(page + ": " + block.lines().findFirst().orElseThrow());
        }
      }
    }
    assertThat(unmarked).as("requests shown without a doc-example marker").isEmpty();
    assertThat(examples()).extracting(Example::name)
        .containsExactlyInAnyOrder(
            "mutate-topology-worker",
            "validate-pytorchjob-worker-2-gpus",
            "extender-prioritize-nodes",
            "extender-inspect",
            "mutate-topology-worker-response",
            "extender-filter-node-names");
  }

  @Test
  void readmeMutationGivesThePatchAndWarningShown() throws Exception {
    var example = example("mutate-topology-worker");
    var response = post(example).path("response");

    assertThat(response.path("warnings").get(0).asText()).isEqualTo(example.answers().get(0).strip());
    assertThat(patch(response)).isEqualTo(JSON.readTree(example.answers().get(1)));
  }

  @Test
  void admissionPageMutationGivesTheResponseAndPatchShown() throws Exception {
    var example = example("mutate-topology-worker-response");
    var review = post(example);

    assertThat(review).isEqualTo(JSON.readTree(example.answers().get(0)));
    assertThat(patch(review.path("response"))).isEqualTo(JSON.readTree(example.answers().get(1)));
  }

  @Test
  void readmeRefusalGivesTheStatusShown() throws Exception {
    var example = example("validate-pytorchjob-worker-2-gpus");
    var response = post(example).path("response");

    var printed = (response.path("allowed").asBoolean() ? "True" : "False") + " " + response.path("status").path("code").asInt() + " " + response.path("status").path("message").asText();
    assertThat(printed).isEqualTo(example.answers().get(0).strip());
  }

  @Test
  void readmePlacementGivesTheScoresShown() throws Exception {
    var example = example("extender-prioritize-nodes");

    assertThat(post(example)).isEqualTo(JSON.readTree(example.answers().get(0)));
  }

  @Test
  void readmeInspectAfterThePlacementShowsTheNodesItCarried() throws Exception {
    // The tour asks inspect after prioritize, whose body carries Node objects: without a cluster
    // they are what the ledger knows. Run in that order, as a reader does.
    post(example("extender-prioritize-nodes"));
    var example = example("extender-inspect");
    var answer = JSON.readTree(SchedulerCaller.given().baseUri(base.toString()).get(example.path()).then().statusCode(200).extract().asString());

    // What the page's python3 one-liner prints, one line per node. Other classes of this profile
    // may have taught the ledger further nodes: the lines shown must all be there, as shown.
    var printed = new ArrayList<String>();
    for (var node : answer.path("nodes")) {
      var sizes = new ArrayList<String>();
      node.path("devs").forEach(d -> sizes.add(d.path("totalGPU").asText()));
      printed.add(node.path("name").asText() + " " + node.path("model").asText() + " GiB per GPU [" + String.join(", ", sizes) + "] used " + node.path("usedGPU").asText());
    }
    var shown = example.answers().get(0).strip().lines().toList();
    assertThat(shown).hasSize(4);
    assertThat(printed).containsAll(shown);
    assertThat(example.command()).contains("[print(n[\"name\"], n[\"model\"], \"GiB per GPU\", [d[\"totalGPU\"] for d in n[\"devs\"]], \"used\", n[\"usedGPU\"]) for n in json.load(sys.stdin)[\"nodes\"]]");
  }

  @Test
  void placementWorkedExampleIsTheFixtureTheExtenderTestChecks() throws Exception {
    // Taken on ExtenderEndpointTest's mock cluster, which asserts this very fixture as the answer.
    var example = example("extender-filter-node-names");

    assertThat(example.file()).isEqualTo("server/src/test/resources/extender/filter-args-node-names.json");
    assertThat(example.path()).isEqualTo("/extender/filter");
    assertThat(JSON.readTree(example.answers().get(0))).isEqualTo(Fixtures.jsonTree(Fixtures.path("extender/filter-node-names.expected.json")));
  }

  private static Example example(String name) {
    return examples().stream().filter(e -> e.name().equals(name)).findFirst().orElseThrow();
  }

  private JsonNode post(Example example) throws Exception {
    var body =
        SchedulerCaller.given()
            .baseUri(base.toString())
            .contentType(ContentType.JSON)
            .body(DocPages.text(Path.of(example.file())))
            .post(example.path())
            .then()
            .statusCode(200)
            .extract()
            .asString();
    return JSON.readTree(body);
  }

  private static JsonNode patch(JsonNode response) throws Exception {
    return JSON.readTree(Base64.getDecoder().decode(response.path("patch").asText()));
  }
}
