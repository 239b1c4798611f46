#!/usr/bin/env bash
# Gang placement time on the mock API server with a kube-scheduler stand-in (queue, backoff,
# requeue on pod update), beside single pods of the same size: see GangLatencyBench.
#   bench/gang-latency.sh [gangs=10] [members=4] [gpus each=2]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JDK 25, as the build (.mvn/jdk25.sh); BENCH_JAVA=/path/to/bin/java measures another JVM.
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
cd "$root"
. "$root/bench/lib/classpath.sh"
classpath="$(server_test_classpath)"
"$java" -cp "$classpath" \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Djava.util.logging.config.file=/dev/null \
  io.gpuadmission.bench.GangLatencyBench "$@" 2>&1 | grep -v " INFO \| DEBUG "
