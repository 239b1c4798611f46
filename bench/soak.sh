#!/usr/bin/env bash
# Soak (not CI): the packaged webhook watching a changing mock cluster, mixed reviews at a fixed
# rate; prints errors, p50/p99/max per window, and the webhook's RSS and threads at start and end.
#   bench/soak.sh [--minutes 30] [--rate 200] [--window-minutes 5] [--warmup-seconds 30] [--port $QUARKUS_HTTP_SSL_PORT]
# Bounded: at most 180 minutes and 1000 requests/s; load goes to 127.0.0.1 only.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JDK 25, as the build (.mvn/jdk25.sh); BENCH_JAVA=/path/to/bin/java measures another JVM.
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
cd "$root"
if [[ ! -f server/target/quarkus-app/quarkus-run.jar ]]; then
  ./mvnw -B -q -DskipTests package
fi
. "$root/bench/lib/classpath.sh"
classpath="$(server_test_classpath)"
exec "$java" -Xmx512m -Djava.util.logging.manager=org.jboss.logmanager.LogManager -cp "$classpath" io.gpuadmission.bench.Soak "$@"
