package io.gpuadmission.node.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gpuadmission.node.api.ScriptedApiServer.Answer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's API client: where it finds the server, the service account token it sends, what a refusal says. */
class ApiServerTest {
  @TempDir Path serviceAccount;
  ScriptedApiServer server;
  ApiServer api;

  @AfterEach
  void stop() {
    if (api != null) {
      api.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void inAPodTheServiceAddressIsTheApiServer() {
    assertThat(ApiServer.inClusterUrl(Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443")))
        .contains("https://10.96.0.1:443");
    assertThat(ApiServer.inClusterUrl(Map.of("KUBERNETES_SERVICE_HOST", "fd00::1", "KUBERNETES_SERVICE_PORT", "6443")))
        .contains("https://[fd00::1]:6443");
    assertThat(ApiServer.inClusterUrl(Map.of())).isEmpty();
  }

  @Test
  void theTokenIsReadAgainWhenTheKubeletReplacesIt() throws Exception {
    server = ScriptedApiServer.start();
    var token = serviceAccount.resolve("token");
    Files.writeString(token, "first\n");
    Files.setLastModifiedTime(token, FileTime.fromMillis(1_000_000));
    api = ApiServer.at(server.url(), serviceAccount, false, Duration.ofSeconds(5));
    server.others.add(Answer.ok("{}"));
    server.others.add(Answer.ok("{}"));
    server.others.add(Answer.ok("{}"));

    api.get("/api/v1/nodes/gpu-1");
    api.get("/api/v1/nodes/gpu-1");
    Files.writeString(token, "second\n");
    Files.setLastModifiedTime(token, FileTime.fromMillis(2_000_000));
    api.get("/api/v1/nodes/gpu-1");

    assertThat(server.requests).extracting(ScriptedApiServer.Request::authorization)
        .containsExactly("Bearer first", "Bearer first", "Bearer second");
  }

  @Test
  void aRefusedTokenIsReadAgainOnceAndTheRequestRepeated() throws Exception {
    server = ScriptedApiServer.start();
    var token = serviceAccount.resolve("token");
    Files.writeString(token, "expired");
    Files.setLastModifiedTime(token, FileTime.fromMillis(1_000_000));
    api = ApiServer.at(server.url(), serviceAccount, false, Duration.ofSeconds(5));
    server.others.add(Answer.ok("{}"));
    api.get("/api/v1/nodes/gpu-1");
    // Replaced with the same modification time (a copy that kept it): only the 401 tells.
    Files.writeString(token, "fresh");
    Files.setLastModifiedTime(token, FileTime.fromMillis(1_000_000));
    server.others.add(Answer.status(401, "Unauthorized"));
    server.others.add(Answer.ok("{\"metadata\":{\"name\":\"gpu-1\"}}"));

    var node = api.get("/api/v1/nodes/gpu-1");

    assertThat(node.path("metadata").path("name").asText()).isEqualTo("gpu-1");
    assertThat(server.requests).extracting(ScriptedApiServer.Request::authorization)
        .containsExactly("Bearer expired", "Bearer expired", "Bearer fresh");
  }

  @Test
  void withoutAServiceAccountNoTokenIsSent() throws Exception {
    server = ScriptedApiServer.start();
    api = ApiServer.at(server.url(), serviceAccount.resolve("absent"), false, Duration.ofSeconds(5));
    server.others.add(Answer.ok("{}"));

    api.get("/api/v1/nodes/gpu-1");

    assertThat(server.requests.getFirst().authorization()).isNull();
  }

  @Test
  void aRefusalSaysTheStatusMessageAndCode() throws Exception {
    server = ScriptedApiServer.start();
    api = ApiServer.at(server.url(), serviceAccount, false, Duration.ofSeconds(5));
    server.others.add(Answer.status(403,
        "pods \\\"job-1\\\" is forbidden: User \\\"system:serviceaccount:gpu-admission-node:gpu-admission-node-agent\\\" cannot get resource \\\"pods\\\""));

    assertThatThrownBy(() -> api.mergePatch("/api/v1/namespaces/default/pods/job-1", "{}")).isInstanceOf(ApiException.class)
        .hasMessage("pods \"job-1\" is forbidden: User \"system:serviceaccount:gpu-admission-node:gpu-admission-node-agent\" cannot get"
            + " resource \"pods\" (HTTP 403)")
        .satisfies(e -> assertThat(((ApiException) e).code()).isEqualTo(403));
    assertThat(server.requests.getFirst().method()).isEqualTo("PATCH");
  }

  @Test
  void anApiServerThatIsNotThereIsNamedWithoutAStackTrace() throws Exception {
    var port = new java.net.ServerSocket(0);
    var free = port.getLocalPort();
    port.close();
    api = ApiServer.at("http://127.0.0.1:" + free, serviceAccount, false, Duration.ofSeconds(5));

    assertThatThrownBy(() -> api.get("/api/v1/nodes/gpu-1")).isInstanceOf(ApiException.class)
        .hasMessageStartingWith("/api/v1/nodes/gpu-1: connection refused")
        .satisfies(e -> assertThat(((ApiException) e).code()).isZero());
  }

  @Test
  void aUrlThatIsNotHttpIsRefusedWithTheSettingsName() {
    assertThatThrownBy(() -> ApiServer.at("ftp://api:6443", serviceAccount, false, Duration.ofSeconds(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("quarkus.kubernetes-client.api-server-url ftp://api:6443: not an http or https URL");
    assertThatThrownBy(() -> ApiServer.at("127.0.0.1:8734", serviceAccount, false, Duration.ofSeconds(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("quarkus.kubernetes-client.api-server-url 127.0.0.1:8734: not a URL (Illegal character in scheme name at index 0:"
            + " 127.0.0.1:8734)");
  }
}
