package io.gpuadmission.manifests;

import io.gpuadmission.support.SchedulerCaller;
import io.gpuadmission.manifests.Overlays.Renderer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.gpuadmission.support.Fixtures;
import io.quarkus.test.common.http.TestHTTPResource;
import io.gpuadmission.cluster.ClusterFixtures;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.restassured.http.ContentType;
import java.net.URL;
import java.util.ArrayList;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every metric the alerts and the dashboard of the monitoring overlay query is one the running
 * service exposes on /q/metrics, so a renamed meter breaks this test, not an operator's night.
 */
@QuarkusTest
// The GPU ledger's meters have a row per node: they show once the ledger holds the fixture nodes.
@WithKubernetesTestServer(crud = true, setup = ClusterFixtures.class)
class MonitoringQueriesTest {
  /** Series Prometheus makes itself, not the service. */
  private static final Set<String> FROM_PROMETHEUS = Set.of("up");

  private static final Set<String> KEYWORDS =
      Set.of(
          "and",
          "or",
          "unless",
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "bool",
          "offset",
          "inf",
          "nan");
  private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");

  @TestHTTPResource(value = "/", tls = true)
  URL base;

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void everyQueriedMetricIsExposedByTheService(Renderer renderer) throws Exception {
    var objects = renderer.objects("manifests/monitoring");
    var expressions = new ArrayList<String>();
    var rule =
        (GenericKubernetesResource)
            RenderedObjects.find(objects, "PrometheusRule", "gpu-admission", "gpu-admission");
    new ObjectMapper()
        .valueToTree(rule.getAdditionalProperties().get("spec"))
        .path("groups")
        .forEach(
            group -> group.path("rules").forEach(r -> expressions.add(r.path("expr").asText())));
    var dashboardMap =
        (ConfigMap)
            RenderedObjects.find(objects, "ConfigMap", "gpu-admission", "gpu-admission-dashboard");
    var dashboard = new ObjectMapper().readTree(dashboardMap.getData().get("gpu-admission.json"));
    for (JsonNode panel : dashboard.path("panels")) {
      panel.path("targets").forEach(t -> expressions.add(t.path("expr").asText()));
    }
    assertThat(expressions).hasSizeGreaterThan(10).doesNotContain("");

    var exposed = exposedMetricNames();
    var queried = new TreeSet<String>();
    expressions.forEach(e -> queried.addAll(metricNames(e)));

    assertThat(queried)
        .contains(
            "gpu_admission_requests_total", "gpu_admission_certificate_expiry_timestamp_seconds");
    assertThat(queried)
        .allSatisfy(
            name ->
                assertThat(exposed)
                    .as("metric %s queried by the monitoring overlay", name)
                    .contains(name));
  }

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void policyReloadAlertLastsAsLongAsTheConfigMapIsNotInForce(Renderer renderer) throws Exception {
    var expression = alert(renderer, "GpuAdmissionPolicyReloadFailing").path("expr").asText();

    // The gauge is 1 from a failed reload until a good one (PolicyReloadTest); a range or a counter
    // would let the alert clear after its window while the bad ConfigMap stays.
    assertThat(metricNames(expression)).containsExactly("policy_last_reload_failed");
    assertThat(expression).doesNotContain("[").doesNotContain("increase").doesNotContain("rate");
  }

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void overCommitAlertFiresOnGpusHeldBeyondWhatTheirNodeHas(Renderer renderer) throws Exception {
    var alert = alert(renderer, "GpuAdmissionGpusOvercommitted");

    assertThat(alert.path("expr").asText()).isEqualTo("max by (node) (gpu_admission_node_gpus_overcommitted) > 0");
    assertThat(alert.path("for").asText()).isEqualTo("5m");
  }

  @ParameterizedTest
  @EnumSource(Renderer.class)
  void noPlacementLeaderAlertFiresOnlyWhenEveryReplicaHasSeenNoLeaderForAMinute(Renderer renderer) throws Exception {
    var alert = alert(renderer, "GpuAdmissionNoPlacementLeader");
    assertThat(alert.path("labels").path("severity").asText()).isEqualTo("critical");
    var form = Pattern.compile("min\\((\\w+)\\) > (\\d+)").matcher(alert.path("expr").asText());
    assertThat(form.matches()).as("the expression this test evaluates: %s", alert.path("expr").asText()).isTrue();
    var t0 = java.time.Instant.parse("2026-11-22T05:00:00Z");
    var clock = new io.gpuadmission.support.MutableClock(t0);
    var a = new io.gpuadmission.placement.LeaderGate("replica-a", clock);
    var b = new io.gpuadmission.placement.LeaderGate("replica-b", clock);

    // A renews the Lease; B sees it.
    a.leaseSeen("replica-a", t0.plusSeconds(15));
    b.leaseSeen("replica-a", t0.plusSeconds(15));
    assertThat(fires(form, a, b)).isFalse();
    // B has been cut off from the API server for two minutes while A renews: a leader exists.
    clock.now = t0.plusSeconds(135);
    a.leaseSeen("replica-a", t0.plusSeconds(150));
    assertThat(fires(form, a, b)).isFalse();
    // Nobody has renewed since: A's Lease expired 61 s ago, and both replicas say so.
    clock.now = t0.plusSeconds(211);
    assertThat(fires(form, a, b)).isTrue();
    // Less than a minute: a leader change after a crash takes up to one lease duration.
    clock.now = t0.plusSeconds(200);
    assertThat(fires(form, a, b)).isFalse();
  }

  /** {@code min(metric) > threshold} over the replicas' gauges, as Prometheus evaluates it. */
  private static boolean fires(java.util.regex.Matcher form, io.gpuadmission.placement.LeaderGate... replicas) {
    var values = new ArrayList<Double>();
    for (var gate : replicas) {
      var registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
      io.gpuadmission.cluster.PlacementLeaderMetrics.register(registry, gate);
      values.add(registry.get(form.group(1)).gauge().value());
    }
    return values.stream().mapToDouble(Double::doubleValue).min().orElseThrow() > Double.parseDouble(form.group(2));
  }

  private static JsonNode alert(Renderer renderer, String name) throws Exception {
    var rule =
        (GenericKubernetesResource)
            RenderedObjects.find(renderer.objects("manifests/monitoring"), "PrometheusRule", "gpu-admission", "gpu-admission");
    return new ObjectMapper().valueToTree(rule.getAdditionalProperties().get("spec")).findValues("rules").stream()
        .flatMap(rules -> java.util.stream.StreamSupport.stream(rules.spliterator(), false))
        .filter(r -> r.path("alert").asText().equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void metricNamesAreReadFromPromqlWithoutFunctionsLabelsOrKeywords() {
    assertThat(
            metricNames(
                "histogram_quantile(0.99, sum by (le, endpoint) (rate(a_bucket{x=\"y\"}[5m]))) > 1"
                    + " and on(job) b"))
        .containsExactlyInAnyOrder("a_bucket", "b");
    assertThat(metricNames("min(c_seconds) - time() < 14 * 86400")).containsExactly("c_seconds");
  }

  /**
   * Metric names in a PromQL expression: identifiers that are not functions, keywords, labels or
   * strings.
   */
  static Set<String> metricNames(String expression) {
    var stripped =
        expression
            .replaceAll("\"[^\"]*\"", " ")
            .replaceAll("\\{[^}]*}", " ")
            .replaceAll("\\[[^]]*]", " ")
            .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
            .replaceAll("\\$\\w+", " ");
    var names = new TreeSet<String>();
    var matcher = IDENTIFIER.matcher(stripped);
    while (matcher.find()) {
      var name = matcher.group();
      var rest = stripped.substring(matcher.end()).stripLeading();
      var previous = matcher.start() == 0 ? ' ' : stripped.charAt(matcher.start() - 1);
      if (!rest.startsWith("(")
          && !KEYWORDS.contains(name)
          && !Character.isDigit(previous)
          && previous != '.'
          && !FROM_PROMETHEUS.contains(name)) {
        names.add(name);
      }
    }
    return names;
  }

  /** Names on /q/metrics after one review once warm-up is over (request meters start then). */
  private Set<String> exposedMetricNames() {
    io.gpuadmission.support.WebhookCalls.awaitReady(base);
    SchedulerCaller.given()
        .baseUri(base.toString())
        .contentType(ContentType.JSON)
        .body(Fixtures.text(Fixtures.path("reviews/pod-topology-worker.json")))
        .post("/mutate")
        .then()
        .statusCode(200);
    SchedulerCaller.given()
        .baseUri(base.toString())
        .contentType(ContentType.JSON)
        .body(Fixtures.text(Fixtures.path("extender/filter-args-node-names.json")))
        .post("/extender/filter")
        .then()
        .statusCode(200);
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(60))
        .until(() -> SchedulerCaller.given().baseUri(base.toString()).get("/q/metrics").asString()
            .contains("gpu_admission_pool_gpu_memory_fragmented_bytes{"));
    var text =
        SchedulerCaller.given()
            .baseUri(base.toString())
            .get("/q/metrics")
            .then()
            .statusCode(200)
            .extract()
            .asString();
    var names = new TreeSet<String>();
    for (var line : text.split("\n")) {
      if (!line.isBlank() && !line.startsWith("#")) {
        var end = line.indexOf('{') >= 0 ? line.indexOf('{') : line.indexOf(' ');
        names.add(line.substring(0, end));
      }
    }
    return names;
  }
}
