package io.gpuadmission.mode;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The one observer of Quarkus' StartupEvent: it starts what the mode runs by firing that mode's
 * event ({@link ServerStartup}); the command line starts nothing, its commands run from {@code
 * main/GpuAdmissionMain}. An architecture test keeps
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
