package io.gpuadmission.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code policy}: commands about the policy document. */
@Command(name = "policy", mixinStandardHelpOptions = true, description = "Commands about the policy.", subcommands = PolicyCheckCommand.class)
public class PolicyCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  /** Without a subcommand: the usage, and the bad-input exit code. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return GpuAdmissionCommand.BAD_INPUT;
  }
}
