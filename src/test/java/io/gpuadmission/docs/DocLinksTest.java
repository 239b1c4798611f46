package io.gpuadmission.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Every relative link and anchor between README.md, docs/*.md and bench/README.md resolves. */
class DocLinksTest {
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

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

  @Test
  void slugsFollowGithub() {
    assertThat(DocPages.slug("Reading `/extender/inspect`")).isEqualTo("reading-extenderinspect");
    assertThat(DocPages.slug("kube-scheduler takes the allocator's choice")).isEqualTo("kube-scheduler-takes-the-allocators-choice");
    assertThat(DocPages.slug("Gang placement (topology jobs)")).isEqualTo("gang-placement-topology-jobs");
  }
}
