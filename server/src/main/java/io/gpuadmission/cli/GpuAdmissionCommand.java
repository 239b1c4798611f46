package io.gpuadmission.cli;

import io.quarkus.picocli.runtime.annotations.TopCommand;
import java.util.concurrent.Callable;
import org.jboss.logging.Logger;
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
    description = "What gpu-admission does with manifests, without a cluster.",
    subcommands = {ExplainCommand.class, PlaceCommand.class, PolicyCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:admitted (explain), placed (place), valid (policy check)", "1:refused, or no place", "2:bad input"},
    footer = {"", "<command> --help shows a command's options."})
public class GpuAdmissionCommand implements Callable<Integer> {
  private static final Logger LOG = Logger.getLogger(GpuAdmissionCommand.class);

  /** Everything admitted, placed or valid. */
  public static final int ADMITTED = 0;
  /** Something refused, or a pod with no place. */
  public static final int REFUSED = 1;
  /** Input that cannot be read, a command line that names no command, or a bad option. */
  public static final int BAD_INPUT = 2;

  @Spec CommandSpec spec;

  /** The command line with every command, built by {@code factory} (commands are CDI beans). */
  public static CommandLine commandLine(CommandLine.IFactory factory) {
    return new CommandLine(GpuAdmissionCommand.class, factory)
        .setExecutionExceptionHandler(
            (e, commandLine, parsed) -> {
              // A bug of ours, not the input's: one line, the trace at DEBUG (QUARKUS_LOG_LEVEL=DEBUG).
              LOG.debug("command failed", e);
              commandLine.getErr().println("gpu-admission: could not finish (" + e + "); QUARKUS_LOG_LEVEL=DEBUG shows where");
              return BAD_INPUT;
            });
  }

  /** Without a command: the usage, and the bad-input exit code. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return BAD_INPUT;
  }
}
