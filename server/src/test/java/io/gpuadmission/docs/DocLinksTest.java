package io.gpuadmission.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every relative link and anchor between README.md, docs/*.md and bench/README.md resolves. */
class DocLinksTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern SECTION_REFERENCE = Pattern.compile("(README(?:\\.md)?|docs/[\\w-]+\\.md|bench/README\\.md),? \"([^\"\\n]+)\"");

  @Test
  void everyRelativeLinkAndAnchorResolves() {
    var broken = new ArrayList<String>();
    var checked = 0;
    for (var page : DocPages.all()) {
      var m = LINK.matcher(DocPages.prose(page));
      while (m.find()) {
        var target = m.group(1);
        if (target.matches("^[a-z]+:.*")) {
          continue; // https:, mailto: — not ours to check offline
        }
        checked++;
        var hash = target.indexOf('#');
        var file = hash < 0 ? target : target.substring(0, hash);
        var resolved = file.isEmpty() ? page : page.toAbsolutePath().getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
          broken.add(page + ": " + target + " (no file " + resolved + ")");
        } else if (hash >= 0) {
          var anchor = target.substring(hash + 1);
          if (!resolved.toString().endsWith(".md") || !DocPages.anchors(resolved).contains(anchor)) {
            broken.add(page + ": " + target + " (no heading with anchor #" + anchor + " in " + Path.of("").toAbsolutePath().relativize(resolved) + ")");
          }
        }
      }
    }
    assertThat(broken).as("broken links").isEmpty();
    assertThat(checked).as("links checked").isGreaterThan(40);
  }

  /**
   * Comments in manifests, scripts and sources that send the reader to a section, as
   * {@code (docs/install.md, "Combine installs")}: the page has that heading.
   */
  @Test
  void everySectionNamedOutsideTheDocsExists() throws IOException {
    var named = 0;
    var broken = new ArrayList<String>();
    for (var root : List.of("manifests", "server/src/main", "node-agent/src/main", "allocator/src/main", "bench", "bin", ".ci")) {
      List<Path> files;
      try (Stream<Path> walk = Files.walk(Path.of(root))) {
        files = walk.filter(Files::isRegularFile).filter(p -> !p.toString().endsWith(".md")).sorted().toList();
      }
      for (var file : files) {
        String text;
        try {
          text = Files.readString(file);
        } catch (MalformedInputException binary) {
          continue;
        }
        var m = SECTION_REFERENCE.matcher(text);
        while (m.find()) {
          named++;
          var page = Path.of(m.group(1).equals("README") ? "README.md" : m.group(1));
          if (!Files.isRegularFile(page) || !DocPages.anchors(page).contains(DocPages.slug(m.group(2)))) {
            broken.add(file + ": " + m.group() + " (no such heading in " + page + ")");
          }
        }
      }
    }
    assertThat(broken).as("sections named in comments that the pages do not have").isEmpty();
    assertThat(named).as("section references checked").isGreaterThan(5);
  }

  @Test
  void slugsFollowGithub() {
    assertThat(DocPages.slug("Reading `/extender/inspect`")).isEqualTo("reading-extenderinspect");
    assertThat(DocPages.slug("kube-scheduler takes the allocator's choice")).isEqualTo("kube-scheduler-takes-the-allocators-choice");
    assertThat(DocPages.slug("Gang placement (topology jobs)")).isEqualTo("gang-placement-topology-jobs");
  }
}
