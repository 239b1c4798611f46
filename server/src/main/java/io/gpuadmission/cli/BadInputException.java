package io.gpuadmission.cli;

import java.util.List;

/**
 * Input the command cannot read (a missing file, YAML that does not parse, a document that is no
 * Kubernetes object, a policy that is not valid), each problem one line naming the file and
 * document. Exit code 2; never a stack trace.
 */
final class BadInputException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final List<String> problems;

  BadInputException(List<String> problems) {
    super(String.join("; ", problems), null, false, false);
    this.problems = List.copyOf(problems);
  }

  BadInputException(String problem) {
    this(List.of(problem));
  }

  List<String> problems() {
    return problems;
  }
}
