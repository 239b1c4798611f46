package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs the Helm client on charts/gpu-admission offline ({@code helm template}, {@code helm lint}).
 * The client is GPU_ADMISSION_HELM, else .mvn/helm.sh's cache, else {@code helm} on the PATH. Where
 * none is found the tests that need it are skipped, saying how to install it; with
 * GPU_ADMISSION_REQUIRE_HELM=true (.ci/run sets it) they fail instead.
 */
final class Chart {
  static final Path DIR = Path.of("charts", "gpu-admission");
  static final String RELEASE = "gpu-admission";
  static final String NAMESPACE = "gpu-admission";

  private static String helm;
  private static String problem;
  private static boolean checked;

  private Chart() {}

  record Result(int exit, String output, String error) {}

  /**
   * The objects {@code helm install} keeps with --set values, without hooks (they run around
   * install, delete and test and are not part of the install); fails the test when Helm refuses.
   */
  static String template(List<String> values, String... extra) throws IOException, InterruptedException {
    return String.join("\n---\n", documents(values, extra).stream().filter(d -> !isHook(d)).toList()) + "\n";
  }

  /** The hooks' documents only. */
  static List<String> hooks(List<String> values, String... extra) throws IOException, InterruptedException {
    return documents(values, extra).stream().filter(Chart::isHook).toList();
  }

  private static List<String> documents(List<String> values, String... extra) throws IOException, InterruptedException {
    var result = templateResult(values, extra);
    assertThat(result.exit()).as("helm template %s failed:%n%s", values, result.error()).isZero();
    return java.util.Arrays.stream(result.output().split("(?m)^---\\s*$")).filter(d -> d.contains("kind:")).toList();
  }

  private static boolean isHook(String document) {
    return document.contains("helm.sh/hook:") || document.contains("\"helm.sh/hook\":");
  }

  /**
   * {@code helm template} (with the hooks), whatever the outcome. The chart in charts/ is not
   * written by any test: each set of values is rendered once per run, not by each class that
   * renders the same install (a Helm process each). Values read from files (which a test may
   * write again with other content) are rendered every time.
   */
  static Result templateResult(List<String> values, String... extra) throws IOException, InterruptedException {
    // Without the chart's CRDs (crds/: Helm installs one only where it is missing, and kustomize
    // only with components/quotas); a caller that wants them passes --include-crds.
    var command = new ArrayList<>(List.of(helm(), "template", RELEASE, DIR.toString(), "--namespace", NAMESPACE));
    values.forEach(v -> command.addAll(List.of("--set", v)));
    command.addAll(List.of(extra));
    if (java.util.Arrays.stream(extra).anyMatch(a -> a.startsWith("--set-file") || a.startsWith("--values") || a.startsWith("-f"))) {
      return run(command);
    }
    var rendered = TEMPLATED.get(command);
    if (rendered == null) {
      rendered = run(command);
      TEMPLATED.putIfAbsent(List.copyOf(command), rendered);
    }
    return rendered;
  }

  private static final java.util.Map<List<String>, Result> TEMPLATED = new java.util.concurrent.ConcurrentHashMap<>();

  static Result run(List<String> command) throws IOException, InterruptedException {
    var process = new ProcessBuilder(command).start();
    var output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    var error = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(120, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException(String.join(" ", command) + " did not finish in 120 s");
    }
    return new Result(process.exitValue(), output, error);
  }

  /** The Helm client's path; skips (or, where Helm is required, fails) the test without one. */
  static synchronized String helm() {
    if (!checked) {
      checked = true;
      var candidates = new ArrayList<String>();
      var configured = System.getenv("GPU_ADMISSION_HELM");
      if (configured != null && !configured.isBlank()) {
        candidates.add(configured);
      } else {
        candidates.add(Path.of(System.getProperty("user.home"), ".cache", "gpu-admission", "helm-3.17.2", "helm", "helm").toString());
        candidates.add("helm");
      }
      for (var candidate : candidates) {
        try {
          var version = run(List.of(candidate, "version", "--short"));
          if (version.exit() == 0 && version.output().startsWith("v3.")) {
            helm = candidate;
            break;
          }
        } catch (IOException | InterruptedException notThere) {
          // next candidate
        }
      }
      if (helm == null) {
        problem = "no Helm 3 client (tried " + String.join(", ", candidates) + "): run .mvn/helm.sh, which installs Helm 3.17.2"
            + " and prints its path for GPU_ADMISSION_HELM";
      }
    }
    if (problem != null && "true".equals(System.getenv("GPU_ADMISSION_REQUIRE_HELM"))) {
      throw new AssertionError(problem);
    }
    Assumptions.assumeTrue(problem == null, () -> problem);
    return helm;
  }

  static String file(String name) throws IOException {
    return Files.readString(DIR.resolve(name));
  }
}
