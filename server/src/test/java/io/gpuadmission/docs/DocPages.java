package io.gpuadmission.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** The documentation pages a reader moves between: README.md, docs/*.md and bench/README.md. */
public final class DocPages {
  private static final Pattern HEADING = Pattern.compile("^#{1,6} +(.+?) *$");
  private static final Pattern FENCE = Pattern.compile("^ *```.*$");

  private DocPages() {}

  static List<Path> all() {
    var pages = new ArrayList<Path>(List.of(Path.of("README.md"), Path.of("bench/README.md")));
    try (Stream<Path> docs = Files.list(Path.of("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return pages;
  }

  static String text(Path page) {
    try {
      return Files.readString(page);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The page without its fenced code blocks, where links are not links. */
  static String prose(Path page) {
    var out = new StringBuilder();
    var inFence = false;
    for (var line : text(page).split("\n", -1)) {
      if (FENCE.matcher(line).matches()) {
        inFence = !inFence;
        continue;
      }
      if (!inFence) {
        out.append(line).append('\n');
      }
    }
    return out.toString();
  }

  /** The fenced code blocks of a text, in order, without their fences. */
  public static List<String> codeBlocks(String text) {
    var blocks = new ArrayList<String>();
    StringBuilder block = null;
    for (var line : text.split("\n", -1)) {
      if (FENCE.matcher(line).matches()) {
        if (block == null) {
          block = new StringBuilder();
        } else {
          blocks.add(block.toString());
          block = null;
        }
      } else if (block != null) {
        block.append(line).append('\n');
      }
    }
    return blocks;
  }

  /** GitHub's anchors for the page's headings: lower case, punctuation dropped, spaces to dashes. */
  static Set<String> anchors(Path page) {
    var anchors = new LinkedHashSet<String>();
    for (var line : prose(page).split("\n")) {
      Matcher m = HEADING.matcher(line);
      if (m.matches()) {
        var slug = slug(m.group(1));
        var unique = slug;
        for (var n = 1; !anchors.add(unique); n++) {
          unique = slug + "-" + n;
        }
      }
    }
    return anchors;
  }

  static String slug(String heading) {
    return heading
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N} _-]", "")
        .replace(' ', '-');
  }
}
