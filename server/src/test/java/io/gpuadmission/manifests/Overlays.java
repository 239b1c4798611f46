package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * Renders the installs offline, as {@code kubectl apply -k} and {@code helm install} would before
 * sending them: kustomize overlays with {@code kubectl kustomize DIR}, the chart with {@code helm
 * template} and the values that make the same install ({@link #helmValues}); parses the result with
 * the fabric8 model.
 */
final class Overlays {
  /** The two ways to install: every manifest test runs on both. */
  enum Renderer {
    KUSTOMIZE,
    HELM;

    List<HasMetadata> objects(String dir) throws IOException, InterruptedException {
      return Overlays.objects(render(dir));
    }

    /** The rendered YAML of the install {@code dir} names (an overlay, or {@link #combined()}). */
    String render(String dir) throws IOException, InterruptedException {
      return this == KUSTOMIZE ? Overlays.render(dir) : Chart.template(helmValues(dir));
    }
  }

  /**
   * The chart's values for the install a kustomize directory makes. The Namespace too: kustomize
   * creates it, the chart only when asked (namespace.create; Helm's --create-namespace otherwise).
   */
  static List<String> helmValues(String dir) {
    var values = new ArrayList<>(List.of("namespace.create=true"));
    if (dir.endsWith("cert-manager-every-component")) {
      values.addAll(List.of("certificates.mode=cert-manager", "scheduler.enabled=true", "monitoring.enabled=true", "nodeAgent.enabled=true"));
      return values;
    }
    switch (dir) {
      case "manifests" -> {}
      case "manifests/cert-manager" -> values.add("certificates.mode=cert-manager");
      case "manifests/scheduler" -> values.add("scheduler.enabled=true");
      case "manifests/monitoring" -> values.add("monitoring.enabled=true");
      case "manifests/node-agent" -> values.add("nodeAgent.enabled=true");
      default -> throw new IllegalArgumentException("no chart values make the install of " + dir);
    }
    return values;
  }

  /** Every install on both renderers: (renderer, dir). */
  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> bothRenderers(List<String> dirs) {
    return dirs.stream()
        .flatMap(d -> java.util.Arrays.stream(Renderer.values()).map(r -> org.junit.jupiter.params.provider.Arguments.of(r, d)));
  }
  /** Every install the README offers, plus one combination of components. */
  static final List<String> ALL =
      List.of("manifests", "manifests/cert-manager", "manifests/scheduler", "manifests/monitoring", "manifests/node-agent");

  /** kubectl 1.21 is the first to embed kustomize 4 (components, inline patches). */
  private static final int MINIMUM_MINOR = 21;

  private static final Pattern CLIENT_MINOR = Pattern.compile("\"minor\"\\s*:\\s*\"(\\d+)");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
  private static String kubectlProblem;
  private static boolean checked;

  private Overlays() {}

  /**
   * The rendered YAML; the test is skipped, saying why, when kubectl is missing or too old. An
   * install under manifests/ (which no test writes) is rendered once per run: a dozen classes
   * render the same ones, each render a kubectl process. Directories tests write (target/) are
   * rendered every time.
   */
  static String render(String dir) throws IOException, InterruptedException {
    assumeKubectl();
    if (!dir.startsWith("manifests")) {
      return kustomize(dir);
    }
    var rendered = RENDERED.get(dir);
    if (rendered == null) {
      rendered = kustomize(dir);
      RENDERED.putIfAbsent(dir, rendered);
    }
    return rendered;
  }

  private static final java.util.Map<String, String> RENDERED = new java.util.concurrent.ConcurrentHashMap<>();

  private static String kustomize(String dir) throws IOException, InterruptedException {
    var result = run("kubectl", "kustomize", dir);
    assertThat(result.exit()).as("kubectl kustomize %s failed:%n%s", dir, result.error()).isZero();
    return result.output();
  }

  @SuppressWarnings("unchecked")
  static List<HasMetadata> objects(String renderedYaml) {
    var parsed = SERIALIZATION.unmarshal(renderedYaml);
    return parsed instanceof List<?> list
        ? new ArrayList<>((List<HasMetadata>) list)
        : List.of((HasMetadata) parsed);
  }

  static List<HasMetadata> renderObjects(String dir) throws IOException, InterruptedException {
    return objects(render(dir));
  }

  /** A kustomization in target/ that combines cert-manager with every component. */
  static String combined() throws IOException {
    var dir = Path.of("target", "overlays", "cert-manager-every-component");
    Files.createDirectories(dir);
    Files.writeString(
        dir.resolve("kustomization.yaml"),
        """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - ../../../manifests/cert-manager
        components:
        - ../../../manifests/components/scheduler
        - ../../../manifests/components/monitoring
        - ../../../manifests/components/node-agent
        """);
    return dir.toString();
  }

  private static synchronized void assumeKubectl() throws IOException, InterruptedException {
    if (!checked) {
      checked = true;
      try {
        var version = run("kubectl", "version", "--client", "-o", "json");
        var matcher = CLIENT_MINOR.matcher(version.output());
        if (version.exit() != 0 || !matcher.find()) {
          kubectlProblem = "kubectl version --client failed: " + version.error();
        } else if (Integer.parseInt(matcher.group(1)) < MINIMUM_MINOR) {
          kubectlProblem =
              "kubectl 1."
                  + matcher.group(1)
                  + " embeds a kustomize too old for components; install kubectl 1."
                  + MINIMUM_MINOR
                  + " or newer to render the overlays";
        }
      } catch (IOException notInstalled) {
        kubectlProblem =
            "kubectl is not installed (.ci/run installs it with apt): the overlays cannot be"
                + " rendered";
      }
    }
    Assumptions.assumeTrue(kubectlProblem == null, () -> kubectlProblem);
  }

  private record Result(int exit, String output, String error) {}

  private static Result run(String... command) throws IOException, InterruptedException {
    var process = new ProcessBuilder(command).redirectErrorStream(false).start();
    var output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    var error = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException(String.join(" ", command) + " did not finish in 60 s");
    }
    return new Result(process.exitValue(), output, error);
  }
}
