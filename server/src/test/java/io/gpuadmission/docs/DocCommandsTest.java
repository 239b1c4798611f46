package io.gpuadmission.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every script and command the documentation names can be run as written: the script exists and
 * is executable, a bench script answers --help with its usage and knows the flags the docs give
 * it, a Maven profile or property the docs pass exists, and the command line knows the options
 * docs/cli.md names. Nothing long runs: only --help.
 */
class DocCommandsTest {
  private static final Pattern SCRIPT = Pattern.compile("(?<![\\w./-])((?:bench|bin|certs|src/main/jvm)/[\\w.-]+(?:\\.sh)?|\\.ci/run)(?![\\w/-])");
  private static final Pattern BENCH_CALL = Pattern.compile("(?<![\\w./-])(bench/[\\w-]+\\.sh)((?: +[^`|;&]*)?)");
  private static final Pattern FLAG = Pattern.compile("(?<![\\w-])(--[a-z][a-z-]*)");
  private static final Pattern MAVEN_PROFILE = Pattern.compile("(?<![\\w-])-P([\\w.-]+)");
  private static final Pattern MAVEN_PROPERTY = Pattern.compile("(?<![\\w-])-D([\\w.-]+)");

  private static String allText() {
    return DocPages.all().stream().map(DocPages::text).collect(Collectors.joining("\n"));
  }

  @Test
  void everyNamedScriptExistsAndIsExecutable() {
    var named = new TreeSet<String>();
    var m = SCRIPT.matcher(allText());
    while (m.find()) {
      var name = m.group(1);
      if (name.endsWith(".sh") || name.startsWith("bin/") || name.equals(".ci/run")) {
        named.add(name);
      }
    }
    assertThat(named).contains("bench/jmh.sh", "bench/cli-time.sh", "bin/kubectl-gpu_admission", ".ci/run", "certs/make-dev-certs.sh");
    var missing = named.stream().filter(n -> !Files.isRegularFile(Path.of(n)) || !Files.isExecutable(Path.of(n))).toList();
    assertThat(missing).as("scripts the docs name that are missing or not executable").isEmpty();
  }

  @Test
  void everyBenchScriptAnswersHelpAndKnowsTheFlagsTheDocsPass() throws Exception {
    var flagsByScript = new TreeMap<String, TreeSet<String>>();
    for (var line : allText().split("\n")) {
      var call = BENCH_CALL.matcher(line);
      while (call.find()) {
        var flags = flagsByScript.computeIfAbsent(call.group(1), k -> new TreeSet<>());
        var f = FLAG.matcher(call.group(2));
        while (f.find()) {
          flags.add(f.group(1));
        }
      }
    }
    List<Path> scripts;
    try (Stream<Path> files = Files.list(Path.of("bench"))) {
      scripts = files.filter(p -> p.toString().endsWith(".sh")).sorted().toList();
    }
    assertThat(scripts).hasSizeGreaterThan(10);
    var problems = new ArrayList<String>();
    for (var script : scripts) {
      var usage = help(script);
      if (usage.exit != 0 || usage.out.isBlank()) {
        problems.add(script + " --help: exit " + usage.exit + ", output: " + usage.out);
        continue;
      }
      for (var flag : flagsByScript.getOrDefault(script.toString(), new TreeSet<>())) {
        if (!usage.out.contains(flag)) {
          problems.add(script + ": the docs pass " + flag + ", its usage does not name it");
        }
      }
    }
    assertThat(problems).isEmpty();
    assertThat(flagsByScript).containsKeys("bench/soak.sh", "bench/simulate-trace.sh", "bench/jmh.sh");
  }

  @Test
  void mavenProfilesAndPropertiesTheDocsPassExist() throws IOException {
    var modules = List.of("allocator", "node-agent", "server");
    var pom = Files.readString(Path.of("pom.xml"));
    var sources = new StringBuilder();
    for (var module : modules) {
      pom += Files.readString(Path.of(module, "pom.xml"));
      try (Stream<Path> files = Files.walk(Path.of(module, "src"))) {
        sources.append(files.filter(Files::isRegularFile).filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".properties"))
            .map(DocPages::text).collect(Collectors.joining("\n")));
      }
    }
    var problems = new ArrayList<String>();
    var mavenLines = allText().lines().filter(l -> l.contains("mvnw")).toList();
    assertThat(mavenLines).isNotEmpty();
    for (var line : mavenLines) {
      var p = MAVEN_PROFILE.matcher(line);
      while (p.find()) {
        if (!pom.contains("<id>" + p.group(1) + "</id>")) {
          problems.add("no Maven profile " + p.group(1) + ": " + line);
        }
      }
      var d = MAVEN_PROPERTY.matcher(line);
      while (d.find()) {
        var property = d.group(1);
        // The test plugins' own user properties (surefire.*, failsafe.*, it.test: which tests run) are read by Maven, not by the project.
        var known = property.equals("skipTests") || property.equals("test") || property.equals("it.test") || property.startsWith("surefire.") || property.startsWith("failsafe.") || pom.contains("<name>" + property + "</name>") || pom.contains("${" + property + "}") || sources.toString().contains("\"" + property + "\"");
        if (!known) {
          problems.add("nothing reads -D" + property + ": " + line);
        }
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void theCommandLineKnowsEveryOptionDocsCliNames() throws IOException {
    String cli;
    try (Stream<Path> files = Files.list(Path.of("server/src/main/java/io/gpuadmission/cli"))) {
      cli = files.map(DocPages::text).collect(Collectors.joining("\n"));
    }
    var unknown = new TreeSet<String>();
    var m = FLAG.matcher(DocPages.text(Path.of("docs/cli.md")));
    while (m.find()) {
      var option = m.group(1);
      var standard = option.equals("--help") && cli.contains("mixinStandardHelpOptions = true");
      if (!standard && !cli.contains("\"" + option + "\"")) {
        unknown.add(option);
      }
    }
    assertThat(unknown).as("options docs/cli.md names that no command declares").isEmpty();
  }

  private record Usage(int exit, String out) {}

  private static Usage help(Path script) throws IOException, InterruptedException {
    var process = new ProcessBuilder("bash", script.toString(), "--help").redirectErrorStream(true).start();
    process.getOutputStream().close();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      return new Usage(-1, "no answer within 30 s");
    }
    return new Usage(process.exitValue(), new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }
}
