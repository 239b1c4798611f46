package io.gpuadmission.cli;

import java.io.PrintWriter;
import java.util.List;

/** What every command does with bad input: one line per problem on stderr, exit code 2. */
final class Commands {
  private Commands() {}

  static int badInput(List<String> problems, PrintWriter err) {
    problems.forEach(p -> err.println("gpu-admission: bad input: " + p));
    err.flush();
    return GpuAdmissionCommand.BAD_INPUT;
  }
}
