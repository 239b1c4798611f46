package io.gpuadmission.mode;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The one observer of Quarkus' StartupEvent: it starts what the mode runs by firing that mode's
 * event ({@link ServerStartup}); the command line starts nothing, its commands run from {@link
 * GpuAdmissionMain}, which also starts the node agent, without Quarkus. An architecture test keeps
 * every other start-up behind these events.
 */
@ApplicationScoped
public class RunModeStartup {
  private final RunMode mode;
  private final Event<ServerStartup> server;

  public RunModeStartup(@ConfigProperty(name = RunMode.PROPERTY) RunMode mode, Event<ServerStartup> server) {
    this.mode = mode;
    this.server = server;
  }

  void start(@Observes StartupEvent event) {
    switch (mode) {
      case SERVER -> server.fire(new ServerStartup());
      case NODE_AGENT ->
          // GpuAdmissionMain starts the agent without Quarkus when the mode is a system property or
          // in the environment; a mode set only in a properties file reaches here.
          throw new IllegalStateException("node-agent mode is chosen before start-up: set GPU_ADMISSION_MODE=node-agent (or"
              + " -Dgpu-admission.mode=node-agent), not gpu-admission.mode in a properties file");
      case CLI -> {
        // The commands run from GpuAdmissionMain once start-up is over.
      }
    }
  }

  /** The mode this process runs in. */
  public RunMode mode() {
    return mode;
  }
}
