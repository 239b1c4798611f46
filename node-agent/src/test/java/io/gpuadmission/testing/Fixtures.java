package io.gpuadmission.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The node agent's YAML fixtures under this module's src/test/resources, and the repository's files. */
public final class Fixtures {
  public static final Path ROOT = Path.of("src/test/resources");
  /**
   * The repository's root: the parent of this module's directory, where its tests run, or the
   * working directory itself for the server's tests, which run from the root and use these helpers.
   */
  public static final Path REPOSITORY = Files.isDirectory(Path.of("node-agent")) ? Path.of("") : Path.of("..");
  private static final YAMLMapper YAML = new YAMLMapper();
  private static final KubernetesSerialization KUBERNETES = new KubernetesSerialization();

  private Fixtures() {}

  public static Path path(String relative) {
    return ROOT.resolve(relative);
  }

  public static JsonNode yamlTree(Path file) {
    try {
      return YAML.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A pod fixture as fabric8's model, as a user's kubectl would send it. */
  public static Pod pod(Path file) {
    try (var in = Files.newInputStream(file)) {
      return KUBERNETES.unmarshal(in, Pod.class);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
