package io.gpuadmission.cli;

import io.quarkus.picocli.runtime.annotations.TopCommand;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code gpu-admission} (or {@code kubectl gpu-admission}): the command line's root. */
@TopCommand
@Command(
    name = "gpu-admission",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "What gpu-admission does with manifests, without a cluster.")
public class GpuAdmissionCommand implements Callable<Integer> {
  /** Exit code of a command line that names no command, or a bad input. */
  public static final int BAD_INPUT = 2;

  @Spec CommandSpec spec;

  /** The command line with every command, built by {@code factory} (commands are CDI beans). */
  public static CommandLine commandLine(CommandLine.IFactory factory) {
    return new CommandLine(GpuAdmissionCommand.class, factory);
  }

  /** Without a command: the usage, and the bad-input exit code. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return BAD_INPUT;
  }
}
