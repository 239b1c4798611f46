#!/usr/bin/env bash
# Runs the allocator JMH benchmarks (server/src/test/java/io/gpuadmission/bench/AllocatorBenchmark.java).
#   bench/jmh.sh                 # all, 1 fork, 3 warm-up + 5 measurement iterations of 2 s
#   bench/jmh.sh Nvl72 -i 10     # a subset, more iterations (any JMH options)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JDK 25, as the build (.mvn/jdk25.sh); BENCH_JAVA=/path/to/bin/java measures another JVM.
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
cd "$root"
. "$root/bench/lib/classpath.sh"
classpath="$(server_test_classpath)"
filter="${1:-AllocatorBenchmark}"
shift || true
exec "$java" -cp "$classpath" org.openjdk.jmh.Main "$filter" \
  -f 1 -wi 3 -w 2s -i 5 -r 2s -rf text -rff server/target/jmh-result.txt "$@"
