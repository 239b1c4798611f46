package io.gpuadmission.mode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.gpuadmission.testing.CountingApiServer;
import io.gpuadmission.testing.PackagedApp;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged server's jar in each mode (the node agent's program is node-agent/'s NodeAgentIT), with the webhook's port already taken by this test, no
 * certificate files, and a kubeconfig whose API server is a socket that counts connections: any
 * listener, certificate read or informer would show (the server mode, as control, fails to start
 * so). The server mode itself is {@code MutateEndpointIT}'s, with no argument as the README starts it.
 */
class RunModeIT {
  @TempDir Path workingDirectory;
  private ServerSocket webhookPort;
  private CountingApiServer apiServer;
  private AtomicInteger apiConnections;
  private Map<String, String> env;

  @BeforeEach
  void takePortAndFakeApiServer() throws IOException {
    webhookPort = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    apiServer = CountingApiServer.start(workingDirectory);
    apiConnections = apiServer.connections();
    env = new HashMap<>();
    env.put("KUBECONFIG", apiServer.kubeconfig().toString());
    env.put("QUARKUS_HTTP_SSL_PORT", Integer.toString(webhookPort.getLocalPort()));
    env.put("GPU_ADMISSION_TLS_CERT", workingDirectory.resolve("missing.crt").toString());
    env.put("GPU_ADMISSION_TLS_KEY", workingDirectory.resolve("missing.key").toString());
  }

  @AfterEach
  void close() throws IOException {
    webhookPort.close();
    apiServer.close();
  }

  @Test
  void aCommandRunsWithoutListenerCertificateOrCluster() {
    var run = PackagedApp.run(workingDirectory, env, "--version");

    assertThat(run.stderr()).isEmpty();
    assertThat(run.stdout()).isEqualTo("gpu-admission 0.1.0-SNAPSHOT\n");
    assertThat(run.exitCode()).isZero();
    assertThat(apiConnections).hasValue(0);
  }

  @Test
  void aCommandLineWithoutCommandPrintsUsageAndExitsTwo() {
    var run = PackagedApp.run(workingDirectory, env, "--no-such-option");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stderr()).startsWith("Unknown option: '--no-such-option'\nUsage: gpu-admission ");
    assertThat(run.stdout()).isEmpty();
  }

  @Test
  void theServerCannotStartHereSoTheseChecksWouldCatchAListener() {
    // The default certificate paths, relative, as target/quarkus-app/run started from elsewhere has them.
    var defaults = new HashMap<>(env);
    defaults.remove("GPU_ADMISSION_TLS_CERT");
    defaults.remove("GPU_ADMISSION_TLS_KEY");
    var run = PackagedApp.run(workingDirectory, defaults);

    assertThat(run.exitCode()).isNotZero();
    assertThat(run.stdout() + run.stderr()).contains("Failed to start application");
    // Started outside the repository: it names the files it looked for where it looked, and
    // speaks of no previous certificate, as there is none at start.
    var dir = workingDirectory.toAbsolutePath();
    assertThat(run.stdout() + run.stderr())
        .contains(
            "no usable certificate at " + dir.resolve("certs/dev/tls.crt") + " and " + dir.resolve("certs/dev/tls.key")
                + " (a file is missing or empty): certs/make-dev-certs.sh makes one (relative paths are read from the working directory, " + dir
                + "; start from the repository root), GPU_ADMISSION_TLS_CERT and GPU_ADMISSION_TLS_KEY point elsewhere")
        .doesNotContain("still serving the previous certificate");
  }
}
