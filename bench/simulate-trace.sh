#!/usr/bin/env bash
# Replays the Alibaba GPU trace (FGD paper, ATC '23) against one placement policy.
#   bench/simulate-trace.sh --nodes FILE --pods FILE --policy binpack|spread|fgd|fgd-cpu|fgd-lookahead|gpushare|best-fit|random
#     [--setup service|paper] [--through simulator|kube-scheduler] [--workload learned|oracle]
#     [--tasks all|shares] [--cpu-pods off-gpu-nodes|kube-scheduler] [--scheduler-config FILE]
#     [--extender-weight N] [--percentage-of-nodes-to-score N] [--seeds 42-51] [--demand 1.3]
#     [--placements DIR] [--replay FILE] [--memory-requests on|off] [--max-pods 110]
# --replay takes the arrival order from a live sample's replay.csv (the seed then drives only
# kube-scheduler's random pick); --memory-requests off --max-pods 256 are that replay's pods and nodes.
# (TraceSimulator's comment says what each means.) Prints one line per seed and a last line:
# mean_allocation_ratio=0.xxxx policy=... pods=FILE
# The data: ../shared/data/alibaba-gpu-v2023/ (research use only; never shipped in the jar).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JDK 25, as the build (.mvn/jdk25.sh); BENCH_JAVA=/path/to/bin/java measures another JVM.
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
# The simulator drives the extender's decision code (ledger, policy, allocator): it needs the
# project's dependencies too (policy parsing).
. "$root/bench/lib/classpath.sh"
classpath="$(server_test_classpath)"
exec "$java" -Xmx2g -Dgpu-admission.root="$root" -cp "$classpath" io.gpuadmission.bench.TraceSimulator "$@"
