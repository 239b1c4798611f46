package io.gpuadmission.cli;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;

/** One run of the command line in this JVM, as the jar runs it: its exit code, stdout and stderr. */
record CommandRun(int exitCode, String stdout, String stderr) {
  static CommandRun of(CommandLine.IFactory factory, String... args) {
    return withStdin(factory, "", args);
  }

  /** With {@code stdin} as the process's standard input (for {@code -f -}). */
  static synchronized CommandRun withStdin(CommandLine.IFactory factory, String stdin, String... args) {
    var out = new StringWriter();
    var err = new StringWriter();
    InputStream before = System.in;
    System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
    try {
      var commandLine = GpuAdmissionCommand.commandLine(factory);
      commandLine.setOut(new PrintWriter(out, true));
      commandLine.setErr(new PrintWriter(err, true));
      var code = commandLine.execute(args);
      return new CommandRun(code, out.toString(), err.toString());
    } finally {
      System.setIn(before);
    }
  }
}
