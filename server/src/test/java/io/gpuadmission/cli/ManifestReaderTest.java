package io.gpuadmission.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading manifests as kubectl apply -f takes them. */
class ManifestReaderTest {
  @TempDir Path dir;

  @Test
  void aTypedListFromTheApiGivesItsItemsTheirKindAndApiVersion() {
    var json =
        """
        {"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]}
        """;
    var read = new ManifestReader(new ByteArrayInputStream(json.getBytes(StandardCharsets.UTF_8))).read(List.of("-"), false);

    assertThat(read.problems()).isEmpty();
    assertThat(read.manifests()).extracting(m -> m.kind() + " " + m.apiVersion() + " " + m.name() + " " + m.source().shortName())
        .containsExactly("Pod v1 a stdin#1 items[0]", "Pod v1 b stdin#1 items[1]");
  }

  /** An empty document still counts, as YAML counts documents: the number is the one an editor finds. */
  @Test
  void emptyDocumentsAndCommentsAreNoObjects() throws IOException {
    var file = write("a.yaml", "# nothing here\n---\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\n");

    var read = new ManifestReader(System.in).read(List.of(file.toString()), false);

    assertThat(read.problems()).isEmpty();
    assertThat(read.manifests()).singleElement().satisfies(m -> assertThat(m.source().describe()).isEqualTo(file + ", document 2 (line 4)"));
  }

  @Test
  void aDirectoryIsItsManifestFilesInNameOrderAndItsSubdirectoriesOnlyWithRecursive() throws IOException {
    write("b.yml", "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n");
    write("a.json", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}}");
    write("notes.txt", "not a manifest");
    Files.createDirectories(dir.resolve("sub"));
    write("sub/c.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: c}\n");

    var flat = new ManifestReader(System.in).read(List.of(dir.toString()), false);
    var recursive = new ManifestReader(System.in).read(List.of(dir.toString()), true);

    assertThat(flat.manifests()).extracting(Manifest::name).containsExactly("a", "b");
    assertThat(recursive.manifests()).extracting(Manifest::name).containsExactly("a", "b", "c");
  }

  @Test
  void aDirectoryWithoutManifestsIsAProblem() {
    var read = new ManifestReader(System.in).read(List.of(dir.toString()), false);

    assertThat(read.problems()).containsExactly(dir + ": no .json, .yaml or .yml files (-R reads subdirectories)");
  }

  private Path write(String name, String text) throws IOException {
    var file = dir.resolve(name);
    Files.writeString(file, text);
    return file;
  }
}
