package io.gpuadmission.mode;

import io.gpuadmission.cli.GpuAdmissionCommand;
import io.gpuadmission.node.NodeAgentMain;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.QuarkusApplication;
import io.quarkus.runtime.annotations.QuarkusMain;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import picocli.CommandLine;

/**
 * The artifact's entry point. Without arguments it runs in the configured mode ({@code server}
 * unless {@value RunMode#PROPERTY} says otherwise); any argument is a command, so the mode is
 * {@code cli}, set before Quarkus reads its configuration: the listener, the certificate and the
 * server's start-up are never set up for a command. The node agent ({@code node-agent}, set as a
 * system property or in the environment, as the DaemonSet does) starts without Quarkus ({@link
 * NodeAgentMain}): it runs on every GPU node, where the server's classes would only cost memory.
 */
@QuarkusMain
public final class GpuAdmissionMain {
  private GpuAdmissionMain() {}

  public static void main(String... args) {
    if (args.length == 0 && nodeAgent()) {
      NodeAgentMain.main();
      return;
    }
    if (args.length > 0) {
      System.setProperty(RunMode.PROPERTY, RunMode.CLI.value());
    }
    Quarkus.run(Application.class, args);
  }

  /** Whether the mode set before start-up (system property, else environment) is the node agent's. */
  private static boolean nodeAgent() {
    var configured = System.getProperty(RunMode.PROPERTY, System.getenv("GPU_ADMISSION_MODE"));
    try {
      return configured != null && RunMode.parse(configured) == RunMode.NODE_AGENT;
    } catch (IllegalArgumentException e) {
      // Quarkus reads the mode again and stops naming the accepted values.
      return false;
    }
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
