package io.gpuadmission.cli;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.gpuadmission.admission.KubernetesJson;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Reads manifests as {@code kubectl apply -f} takes them: files, directories (their {@code .json},
 * {@code .yaml} and {@code .yml} files, in name order; with {@code recursive} their
 * subdirectories too) and {@code -} for stdin; multi-document YAML or JSON; Lists ({@code kind:
 * List} from {@code kubectl get -o yaml}, or {@code PodList} and the like) become their items.
 * Objects are kept as trees; each use maps them to the one type it reads. What cannot be read is
 * one problem line naming the file and document, and the rest is still read.
 */
final class ManifestReader {
  private static final JsonFactory YAML = new YAMLFactory();
  private static final ObjectMapper MAPPER = KubernetesJson.mapper();

  private final InputStream stdin;

  ManifestReader(InputStream stdin) {
    this.stdin = stdin;
  }

  /** What was read, and what could not be. */
  record Read(List<Manifest> manifests, List<String> problems) {}

  Read read(List<String> paths, boolean recursive) {
    var manifests = new ArrayList<Manifest>();
    var problems = new ArrayList<String>();
    for (var path : paths) {
      if (path.equals("-")) {
        try {
          parse("stdin", Utf8Text.decode(stdin.readAllBytes()), null, manifests, problems);
        } catch (IOException e) {
          problems.add("stdin: " + e.getMessage());
        } catch (Utf8Text.NotText e) {
          problems.add("stdin: " + e.getMessage());
        }
        continue;
      }
      var file = Path.of(path);
      if (Files.isDirectory(file)) {
        var files = manifestFiles(file, recursive, problems);
        if (files.isEmpty() && problems.isEmpty()) {
          problems.add(path + ": no .json, .yaml or .yml files" + (recursive ? "" : " (-R reads subdirectories)"));
        }
        files.forEach(f -> readFile(f.toString(), f, manifests, problems));
      } else {
        readFile(path, file, manifests, problems);
      }
    }
    return new Read(manifests, problems);
  }

  private static List<Path> manifestFiles(Path directory, boolean recursive, List<String> problems) {
    try (Stream<Path> walk = recursive ? Files.walk(directory) : Files.list(directory)) {
      return walk.filter(Files::isRegularFile).filter(ManifestReader::manifestName).sorted().toList();
    } catch (IOException e) {
      problems.add(directory + ": " + e.getMessage());
      return List.of();
    }
  }

  private static boolean manifestName(Path file) {
    var name = file.getFileName().toString().toLowerCase(Locale.ROOT);
    return name.endsWith(".yaml") || name.endsWith(".yml") || name.endsWith(".json");
  }

  private void readFile(String shown, Path file, List<Manifest> manifests, List<String> problems) {
    String text;
    try {
      text = Utf8Text.decode(Files.readAllBytes(file));
    } catch (Utf8Text.NotText e) {
      problems.add(shown + ": " + e.getMessage());
      return;
    } catch (NoSuchFileException e) {
      problems.add(shown + ": no such file or directory");
      return;
    } catch (IOException e) {
      problems.add(shown + ": cannot be read (" + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")");
      return;
    }
    var json = shown.toLowerCase(Locale.ROOT).endsWith(".json");
    parse(shown, text, json, manifests, problems);
  }

  /** Every document of {@code text}; {@code json} null: decided by its first character. */
  private static void parse(String file, String text, Boolean json, List<Manifest> manifests, List<String> problems) {
    var asJson = json != null ? json : text.stripLeading().startsWith("{") || text.stripLeading().startsWith("[");
    var factory = asJson ? MAPPER.getFactory() : YAML;
    var document = 0;
    try (JsonParser parser = factory.createParser(text)) {
      while (true) {
        JsonToken token;
        try {
          token = parser.nextToken();
        } catch (JsonProcessingException e) {
          problems.add(where(file, document + 1, e) + firstLine(e.getOriginalMessage()));
          return;
        }
        if (token == null) {
          return;
        }
        document++;
        var line = parser.currentTokenLocation().getLineNr();
        JsonNode node;
        try {
          node = MAPPER.readTree(parser);
        } catch (JsonProcessingException e) {
          problems.add(where(file, document, e) + firstLine(e.getOriginalMessage()));
          return;
        }
        if (node == null || node.isNull() || node.isMissingNode()) {
          continue; // an empty document, as between two "---"
        }
        objects(new ManifestSource(file, document, line, -1), node, manifests, problems);
      }
    } catch (IOException e) {
      problems.add(file + ": " + firstLine(e.getMessage()));
    }
  }

  /** The document's object, or a List's items (each must be an object; kind and apiVersion may come from the List). */
  private static void objects(ManifestSource source, JsonNode node, List<Manifest> manifests, List<String> problems) {
    var problem = notAnObject(node);
    if (problem != null) {
      problems.add(source.describe() + ": " + problem);
      return;
    }
    var kind = node.path("kind").asText();
    if (!kind.endsWith("List") || !node.has("items")) {
      manifests.add(new Manifest(source, node));
      return;
    }
    var items = node.path("items");
    if (!items.isArray()) {
      problems.add(source.describe() + ": items of a " + kind + " must be a list");
      return;
    }
    var itemKind = kind.equals("List") ? "" : kind.substring(0, kind.length() - "List".length());
    for (int i = 0; i < items.size(); i++) {
      var itemSource = new ManifestSource(source.file(), source.document(), source.line(), i);
      var item = items.get(i);
      if (item.isObject() && !itemKind.isEmpty()) {
        // A typed list from the API (PodList) leaves kind and apiVersion off its items.
        var copy = (ObjectNode) item.deepCopy();
        if (!copy.path("kind").isTextual()) {
          copy.put("kind", itemKind);
        }
        if (!copy.path("apiVersion").isTextual()) {
          copy.set("apiVersion", node.path("apiVersion"));
        }
        item = copy;
      }
      var itemProblem = notAnObject(item);
      if (itemProblem != null) {
        problems.add(itemSource.describe() + ": " + itemProblem);
      } else {
        manifests.add(new Manifest(itemSource, item));
      }
    }
  }

  /** Why {@code node} is no Kubernetes object (as kubectl says it), or null. */
  private static String notAnObject(JsonNode node) {
    if (!node.isObject()) {
      var type = node.getNodeType().name().toLowerCase(Locale.ROOT);
      return (type.startsWith("a") || type.startsWith("o") ? "an " : "a ") + type + ", not a Kubernetes object";
    }
    var missing = new ArrayList<String>();
    if (!node.path("apiVersion").isTextual() || node.path("apiVersion").asText().isEmpty()) {
      missing.add("apiVersion not set");
    }
    if (!node.path("kind").isTextual() || node.path("kind").asText().isEmpty()) {
      missing.add("kind not set");
    }
    return missing.isEmpty() ? null : String.join(", ", missing) + ": not a Kubernetes object";
  }

  private static String where(String file, int document, JsonProcessingException e) {
    var location = e.getLocation();
    var line = location == null ? -1 : location.getLineNr();
    return file + ", document " + document + (line > 0 ? ", line " + line : "") + ": ";
  }

  /**
   * The problem without its context: SnakeYAML writes what it was doing and what it found, each
   * followed by an indented excerpt ({@code in 'reader', line 5, ...} and the line with a caret),
   * which the location already given replaces.
   */
  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable";
    }
    var parts = message.lines().filter(l -> !l.isBlank() && !Character.isWhitespace(l.charAt(0))).map(String::strip).toList();
    return parts.isEmpty() ? message.strip() : String.join(": ", parts);
  }
}
