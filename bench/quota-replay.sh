#!/usr/bin/env bash
# Replays the Alibaba GPU trace (arrivals and durations) with three teams of unequal demand, in three
# modes: no quota, a fixed ResourceQuota at each team's min, the elastic quota tree (ElasticQuotaTree:
# borrowing up to max, fair shares, reclaim for a min).
#   bench/quota-replay.sh [--nodes FILE] [--pods FILE] [--speedup 400] [--sample NODE_STEP,POD_STEP]
# Prints per mode the mean GPU allocation ratio until the last arrival, max violations, reclaim
# evictions, and per team the waits from a pending pod under its team's min to its bind (p50, p95,
# max, seconds of the replay's clock); a last line the ratios between modes.
# (QuotaReplay's comment says what is replayed.) The data: ../shared/data/alibaba-gpu-v2023/
# (research use only; never shipped in the jar).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${GPU_TRACE_DIR:-$root/../shared/data/alibaba-gpu-v2023}"
[[ -d "$data" ]] || data="/work/shared/data/alibaba-gpu-v2023"
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
. "$root/bench/lib/classpath.sh"
classpath="$(server_test_classpath)"
exec "$java" -Xmx1g -cp "$classpath" io.gpuadmission.bench.QuotaReplay \
  --nodes "$data/openb_node_list_gpu_node.csv" --pods "$data/openb_pod_list_default.csv" "$@"
