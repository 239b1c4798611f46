package io.gpuadmission.main;

import io.gpuadmission.cli.GpuAdmissionCommand;
import io.gpuadmission.mode.RunMode;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import picocli.CommandLine;

/**
 * The artifact's entry point. Without arguments it runs in the configured mode ({@code server}
 * unless {@value RunMode#PROPERTY} says otherwise); any argument is a command, so the mode is
 * {@code cli}, set before Quarkus reads its configuration: the listener, the certificate and the
 * server's start-up are never set up for a command. (The node agent is a program of its own, the
 * node-agent module's.) It has a package of its own: it is the one class that knows both the modes
 * and the command line, and no other package imports it.
 */
@QuarkusMain
public final class GpuAdmissionMain {
  private GpuAdmissionMain() {}

  public static void main(String... args) {
    if (args.length > 0) {
      System.setProperty(RunMode.PROPERTY, RunMode.CLI.value());
    }
    Quarkus.run(Application.class, args);
  }

  /** Runs the command line in cli mode; otherwise serves until the process is told to stop. */
  public static final class Application implements QuarkusApplication {
    private final RunMode mode;
    private final CommandLine.IFactory factory;

    Application(@ConfigProperty(name = RunMode.PROPERTY) RunMode mode, CommandLine.IFactory factory) {
      this.mode = mode;
      this.factory = factory;
    }

    @Override
    public int run(String... args) {
      if (mode == RunMode.CLI) {
        return GpuAdmissionCommand.commandLine(factory).execute(args);
      }
      Quarkus.waitForExit();
      return 0;
    }
  }
}
