package io.gpuadmission.mode;

import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * The one observer of Quarkus' StartupEvent: it starts what the mode runs by firing that mode's
 * event ({@link ServerStartup}, {@link NodeAgentStartup}); the command line starts nothing, its
 * commands run from {@link GpuAdmissionMain}. An architecture test keeps every other start-up
 * behind these events.
 */
@ApplicationScoped
public class RunModeStartup {
  private static final Logger LOG = Logger.getLogger(RunModeStartup.class);

  private final RunMode mode;
  private final Event<ServerStartup> server;
  private final Event<NodeAgentStartup> nodeAgent;

  public RunModeStartup(
      @ConfigProperty(name = RunMode.PROPERTY) RunMode mode, Event<ServerStartup> server, Event<NodeAgentStartup> nodeAgent) {
    this.mode = mode;
    this.server = server;
    this.nodeAgent = nodeAgent;
  }

  void start(@Observes StartupEvent event) {
    switch (mode) {
      case SERVER -> server.fire(new ServerStartup());
      case NODE_AGENT -> {
        LOG.info("node-agent mode: no webhook listener, no server informers, no leader election");
        nodeAgent.fire(new NodeAgentStartup());
      }
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
