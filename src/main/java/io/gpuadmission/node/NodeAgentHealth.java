package io.gpuadmission.node;

import io.smallrye.health.api.HealthRegistry;
import java.time.Clock;
import java.time.Duration;
import org.eclipse.microprofile.health.HealthCheckResponse;

/**
 * The agent's health, registered only in node-agent mode. Live while its rounds keep running (a
 * stuck round thread is the one fault a restart mends; a kubelet or API server that does not
 * answer is not, and only delays the records). Ready once a round got the kubelet's answer with
 * the node's pods listed: a DaemonSet pod whose socket is not mounted stays unready, which {@code
 * kubectl rollout status} shows.
 */
final class NodeAgentHealth {
  static final String NAME = "node-agent";

  private NodeAgentHealth() {}

  static void register(NodeAgent agent, Duration period, Duration callTimeout, Clock clock, HealthRegistry liveness, HealthRegistry readiness) {
    // A round takes at most two calls' timeouts and a patch per changed pod; three periods on top.
    var stuckAfter = period.multipliedBy(3).plus(callTimeout.multipliedBy(2)).plusSeconds(30);
    var started = clock.instant();
    var answered = new java.util.concurrent.atomic.AtomicBoolean();
    liveness.register(NAME, () -> {
      var last = agent.lastRound();
      var since = Duration.between(last.map(NodeAgent.Round::at).orElse(started), clock.instant());
      return HealthCheckResponse.named(NAME).status(since.compareTo(stuckAfter) < 0)
          .withData("secondsSinceLastRound", since.toSeconds()).build();
    });
    readiness.register(NAME, () -> {
      var last = agent.lastRound();
      if (last.isPresent() && last.get().kubeletAnswered() && agent.podsSynced()) {
        answered.set(true);
      }
      return HealthCheckResponse.named(NAME).status(answered.get())
          .withData("kubeletAnswered", last.map(NodeAgent.Round::kubeletAnswered).orElse(false))
          .withData("podsListed", agent.podsSynced()).build();
    });
  }
}
