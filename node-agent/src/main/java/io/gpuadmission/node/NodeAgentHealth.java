package io.gpuadmission.node;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The agent's health, as the DaemonSet's probes ask it. Live while its rounds keep running (a
 * stuck round thread is the one fault a restart mends; a kubelet or API server that does not
 * answer is not, and only delays the records). Ready from the first round that got the kubelet's
 * answer with the node's pods listed, and from then on: a pod whose socket is not mounted stays
 * unready, which {@code kubectl rollout status} shows, while a later kubelet restart does not flap
 * it. Answers in MicroProfile Health's JSON, as {@code /q/health} does in server mode.
 */
final class NodeAgentHealth {
  /** A probe's answer: HTTP status and body. */
  record Answer(int status, String json) {}

  private final NodeAgent agent;
  private final Clock clock;
  private final Duration stuckAfter;
  private final Instant started;
  private volatile boolean ready;

  NodeAgentHealth(NodeAgent agent, Duration period, Duration callTimeout, Clock clock) {
    this.agent = agent;
    this.clock = clock;
    // A round takes at most two calls' timeouts and a patch per changed pod; three periods on top.
    this.stuckAfter = period.multipliedBy(3).plus(callTimeout.multipliedBy(2)).plusSeconds(30);
    this.started = clock.instant();
  }

  Answer live() {
    var since = Duration.between(agent.lastRound().map(NodeAgent.Round::at).orElse(started), clock.instant());
    return answer(since.compareTo(stuckAfter) < 0, "\"secondsSinceLastRound\":" + since.toSeconds());
  }

  Answer ready() {
    var last = agent.lastRound();
    var answered = last.map(NodeAgent.Round::kubeletAnswered).orElse(false);
    if (answered && agent.podsSynced()) {
      ready = true;
    }
    return answer(ready, "\"kubeletAnswered\":" + answered + ",\"podsListed\":" + agent.podsSynced());
  }

  /** Started once the agent runs (this object exists only then). */
  Answer started() {
    return answer(true, "\"node\":\"" + agent.node() + "\"");
  }

  private static Answer answer(boolean up, String data) {
    var status = up ? "UP" : "DOWN";
    return new Answer(up ? 200 : 503,
        "{\"status\":\"" + status + "\",\"checks\":[{\"name\":\"node-agent\",\"status\":\"" + status + "\",\"data\":{" + data + "}}]}");
  }
}
