package io.gpuadmission.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The module's packaged program (the server's {@code server/target/quarkus-app/quarkus-run.jar}, the
 * node agent's {@code node-agent/target/node-agent/node-agent.jar}, made by {@code package} before
 * failsafe runs; each module's pom names it as {@code packaged.jar}) started as users start it, in a JVM of its own, with the environment and working
 * directory a test gives. Output goes to files, so a chatty process never blocks on a full pipe.
 * In the native build ({@code -Pnative}) the poms name the native executable instead, as {@code
 * packaged.executable}, and the same tests start that.
 */
public final class PackagedApp {
  /** The jar this build packaged; a benchmark may name another ({@code -Dbench.jar=...}: an earlier build, to compare). */
  public static final Path JAR = Path.of(System.getProperty("bench.jar", System.getProperty("packaged.jar", "packaged.jar"))).toAbsolutePath();
  /**
   * The native executable the native build made in place of the jar; empty in the JVM build. A
   * benchmark names one with BENCH_EXECUTABLE (bench/README.md, "Native executables").
   */
  public static final java.util.Optional<Path> EXECUTABLE =
      java.util.Optional.ofNullable(System.getProperty("packaged.executable", System.getenv("BENCH_EXECUTABLE")))
          .filter(p -> !p.isBlank()).map(p -> Path.of(p).toAbsolutePath());

  private PackagedApp() {}

  /** A finished run: its exit code and what it wrote. */
  public record Run(int exitCode, String stdout, String stderr) {}

  /** A process still running, with its output so far. */
  public static final class Running implements AutoCloseable {
    private final Process process;
    private final Path stdout;
    private final Path stderr;

    Running(Process process, Path stdout, Path stderr) {
      this.process = process;
      this.stdout = stdout;
      this.stderr = stderr;
    }

    public String stdout() {
      return read(stdout);
    }

    public String stderr() {
      return read(stderr);
    }

    public boolean alive() {
      return process.isAlive();
    }

    public long pid() {
      return process.pid();
    }

    /** Its exit status once it has ended (after {@link #close}: 143 for the SIGTERM that ended it). */
    public int exitValue() {
      return process.exitValue();
    }

    @Override
    public void close() throws InterruptedException {
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }

  /** Runs the jar with {@code args} to its end (at most two minutes). */
  public static Run run(Path workingDirectory, Map<String, String> env, String... args) {
    try (var running = start(workingDirectory, env, args)) {
      if (!running.process.waitFor(2, TimeUnit.MINUTES)) {
        throw new AssertionError("still running after two minutes: " + List.of(args) + "\n" + running.stderr());
      }
      return new Run(running.process.exitValue(), running.stdout(), running.stderr());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Starts the jar with {@code args}; the caller closes it. */
  public static Running start(Path workingDirectory, Map<String, String> env, String... args) {
    return start(workingDirectory, env, List.of(), args);
  }

  /** As {@link #start(Path, Map, String...)}, the java command (or the native executable) run through {@code launcher} (e.g. taskset). */
  public static Running start(Path workingDirectory, Map<String, String> env, List<String> launcher, String... args) {
    var command = new java.util.ArrayList<String>(launcher);
    command.addAll(program());
    command.addAll(List.of(args));
    return startCommand(workingDirectory, env, command);
  }

  /** Whether the tests run the native executable ({@code -Pnative}) rather than the jar. */
  public static boolean isNative() {
    return EXECUTABLE.isPresent();
  }

  /** The command that starts the program: the native executable, or {@code java -jar} with the packaged jar. */
  public static List<String> program() {
    return EXECUTABLE.map(executable -> List.of(executable.toString()))
        .orElseGet(() -> List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", JAR.toString()));
  }

  /** Runs {@code command} (a wrapper that starts the jar) to its end (at most two minutes). */
  public static Run runCommand(Path workingDirectory, Map<String, String> env, List<String> command) {
    try (var running = startCommand(workingDirectory, env, command)) {
      if (!running.process.waitFor(2, TimeUnit.MINUTES)) {
        throw new AssertionError("still running after two minutes: " + command + "\n" + running.stderr());
      }
      return new Run(running.process.exitValue(), running.stdout(), running.stderr());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Starts {@code command} (one that starts a packaged program itself); the caller closes it. */
  public static Running startCommand(Path workingDirectory, Map<String, String> env, List<String> command) {
    var packaged = EXECUTABLE.orElse(JAR);
    if (!Files.isRegularFile(packaged)) {
      throw new IllegalStateException(packaged + " is missing: run ./mvnw verify (package comes before the integration tests)");
    }
    try {
      var stdout = Files.createTempFile("gpu-admission-out", ".txt");
      var stderr = Files.createTempFile("gpu-admission-err", ".txt");
      var builder = new ProcessBuilder(command).directory(workingDirectory.toFile());
      builder.redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).redirectInput(ProcessBuilder.Redirect.from(devNull()));
      // Nothing of the test JVM's cluster or mode settings leaks in: each test says what it sets.
      builder.environment().keySet().removeIf(k -> k.startsWith("GPU_ADMISSION_") || k.startsWith("QUARKUS_") || k.startsWith("KUBE"));
      builder.environment().putAll(env);
      return new Running(builder.start(), stdout, stderr);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static java.io.File devNull() {
    return new java.io.File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
