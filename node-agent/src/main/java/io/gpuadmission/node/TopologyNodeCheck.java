package io.gpuadmission.node;

import io.gpuadmission.node.api.ApiException;
import io.gpuadmission.node.api.ApiServer;
import java.time.Duration;
import java.util.function.Consumer;
import org.jboss.logging.Logger;

/**
 * Whether this node is a topology node ({@code ack.node.gpu.schedule=topology}), which decides
 * whether the agent serves the device plugin. Read from the API server; while it does not answer
 * (the agent started during an outage, or before the API server), asked again on a thread of its
 * own with growing pauses, as client-go's reflector asks, one line per pause, rather than the agent
 * exiting and waiting out CrashLoopBackOff.
 */
final class TopologyNodeCheck implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(TopologyNodeCheck.class);

  private final Thread thread;
  private volatile boolean closed;

  private TopologyNodeCheck(ApiServer api, String node, Duration first, Duration max, Consumer<Boolean> decided) {
    thread = new Thread(() -> run(api, node, first, max, decided), "topology check " + node);
    thread.setDaemon(true);
  }

  /** Reads the Node now and, until it answers, again after {@code first}, doubling up to {@code max}; hands the answer to {@code decided} once. */
  static TopologyNodeCheck start(ApiServer api, String node, Duration first, Duration max, Consumer<Boolean> decided) {
    var check = new TopologyNodeCheck(api, node, first, max, decided);
    check.thread.start();
    return check;
  }

  private void run(ApiServer api, String node, Duration first, Duration max, Consumer<Boolean> decided) {
    var wait = first;
    var failed = false;
    while (!closed) {
      try {
        var topology = DevicePlugin.topologyNode(api, node);
        if (failed) {
          LOG.infof("Node %s read: %s", node, topology ? "a topology node, the device plugin is served" : "not a topology node, no device plugin");
        }
        decided.accept(topology);
        return;
      } catch (ApiException e) {
        failed = true;
        LOG.warnf("%s; asking again in %d ms (the device plugin waits for it; the pods' records for the pod list)", e.getMessage(),
            wait.toMillis());
      }
      try {
        Thread.sleep(wait);
      } catch (InterruptedException e) {
        return;
      }
      wait = wait.multipliedBy(2).compareTo(max) > 0 ? max : wait.multipliedBy(2);
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }
}
