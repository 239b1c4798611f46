#!/usr/bin/env bash
# The node agent's footprint: the packaged jar in node-agent mode with the DaemonSet's JVM options,
# pinned to CPU 0, on a full node (110 pods, 8 with GPUs) of a fake kubelet and the mock API
# server; beside it in the same run the JVM floor (same options, a main that sleeps) and the agent
# asking the kubelet once an hour. Prints RSS once idle, CPU over the window, List calls, and the
# CPU of one round against the hourly agent. See NodeAgentFootprint.
#   bench/node-agent.sh [window seconds=120] [settle seconds=30]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# JDK 25, as the build (.mvn/jdk25.sh): the jar's classes need it, and the agent runs on the bench's JVM.
. "$root/.mvn/jdk25.sh"
./mvnw -B -q -DskipTests package
./mvnw -B -q -DskipTests test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench-classpath.txt
"$JAVA_HOME/bin/java" -cp "target/test-classes:target/classes:$(cat target/bench-classpath.txt)" \
  -Djava.util.logging.manager=org.jboss.logmanager.LogManager \
  io.gpuadmission.bench.NodeAgentFootprint "$@" 2>&1 | grep -v " INFO \| DEBUG "
