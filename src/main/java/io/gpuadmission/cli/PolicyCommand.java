package io.gpuadmission.cli;

import picocli.CommandLine.Command;

/** {@code policy}: commands about the policy document. */
@Command(name = "policy", description = "Commands about the policy.", subcommands = PolicyCheckCommand.class)
public class PolicyCommand implements java.util.concurrent.Callable<Integer> {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return GpuAdmissionCommand.BAD_INPUT;
  }
}
