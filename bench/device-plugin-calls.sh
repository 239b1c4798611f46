#!/usr/bin/env bash
# The device plugin's call latency: the packaged jar in node-agent mode with the DaemonSet's JVM
# options, pinned to CPU 0, on a full node (110 pods in its cache), driven over its Unix socket as
# the v1.32 kubelet admits GPU containers (GetPreferredAllocation, then Allocate). Prints p50/p99/max
# of both beside GetDevicePluginOptions on the same connection (the baseline), wrong answers, and
# the API server requests made while the calls were under way. See DevicePluginCalls.
#   bench/device-plugin-calls.sh [pods=300] [warm-up pods=50]
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
  io.gpuadmission.bench.DevicePluginCalls "$@" 2>&1 | grep -v " INFO \| DEBUG "
