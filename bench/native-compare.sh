#!/usr/bin/env bash
# The webhook's JVM build and its native executable in one run, each pinned to CPU 0 with wrk on
# CPU 1, beside the nginx floor measured before and after them: time to the first /mutate answer
# and to Ready, CPU used until Ready, RSS at Ready and after 10,000 reviews (20 s at 500/s), and CPU
# per review in keep-alive saturation for each fixture of the load harness (ratios to the floor).
# Both run without a cluster, on the dev certificate, with the options they ship with: the JVM's
# jvm.args, its AOT cache and the Deployment's -XX:MaxRAM=1536m (server/target/quarkus-app/run);
# the native executable with the image's -Xmn32m and -XX:MaxRAM=1536m (the limit, which the native
# kit's executables do not read from a cgroup). Bounded: a few minutes; stops what it started.
#   bench/native-compare.sh [flavours...]     (default: jvm native)
# Needs: server/target/quarkus-app (./mvnw package) and server/target/gpu-admission-*-runner
# (./mvnw -Pnative package); wrk, nginx (../shared/bench). Env: QUARKUS_HTTP_SSL_PORT (8467),
# BENCH_HARNESS (../shared/bench), BENCH_DURATION (10), BENCH_WARMUP (30 s of saturation before the
# CPU figures: the JIT runs on the same CPU), BENCH_REVIEWS (10000), FLOOR_PORT (18843).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/.mvn/jdk25.sh"
harness="${BENCH_HARNESS:-$root/../shared/bench}"
port="${QUARKUS_HTTP_SSL_PORT:-8467}"
duration="${BENCH_DURATION:-10}"
warmup="${BENCH_WARMUP:-30}"
reviews="${BENCH_REVIEWS:-10000}"
flavours=("$@")
((${#flavours[@]})) || flavours=(jvm native)
fixtures=(gpu-topology gpu-mem cpu-only)
native="$(ls "$root"/server/target/gpu-admission-*-runner 2>/dev/null | head -1)"
work="$(mktemp -d)"
pid=""
trap '[[ -n "$pid" ]] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; rm -rf "$work"' EXIT

floor_cpu() {
  BENCH_WORK="$work" BENCH_PEERS=floor BENCH_WARMUP=5 BENCH_DURATION="$duration" BENCH_RATES=" " \
    FLOOR_PORT="${FLOOR_PORT:-18843}" "$harness/run-peers.sh" >/dev/null 2>&1 || true
  awk -F'\t' '$2 == "cpu_us_per_req" { v = $3 } END { print v + 0 }' "$work"/results-*.tsv 2>/dev/null
  rm -f "$work"/results-*.tsv
}
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
rss_mib() { awk '/VmRSS/ {printf "%d", $2 / 1024}' "/proc/$pid/status"; }
cpu_ticks() { awk '{ s=$0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$pid/stat"; }
bench() { # endpoint fixture duration [rate] -> requests served
  BENCH_FIXTURE="$root/server/src/test/resources/bench/admissionreview-$2.json" BENCH_DURATION="$3" BENCH_RATE="${4:-0}" BENCH_SKIP_CHECK=1 \
    "$harness/webhook-bench.sh" "https://127.0.0.1:$port/$1" 2>/dev/null | sed -n 's/.* requests=\([0-9]*\) .*/\1/p'
}
start_server() { # flavour
  export GPU_ADMISSION_TLS_CERT="$root/certs/dev/tls.crt" GPU_ADMISSION_TLS_KEY="$root/certs/dev/tls.key" \
    GPU_ADMISSION_CLUSTER_ENABLED=false GPU_ADMISSION_TLS_SELF_MANAGED=false QUARKUS_HTTP_SSL_PORT="$port" MALLOC_ARENA_MAX=2
  case "$1" in
    jvm) (cd "$root/server/target/quarkus-app" && exec taskset -c 0 "$JAVA_HOME/bin/java" @jvm.args -XX:MaxRAM=1536m \
        -XX:AOTCache=app.aot -XX:AOTMode=on -jar quarkus-run.jar) >"$work/$1.log" 2>&1 & ;;
    native) [[ -x "$native" ]] || { echo "no native executable: ./mvnw -Pnative package first" >&2; exit 1; }
      (cd "$work" && exec taskset -c 0 "$native" -Xmn32m -XX:MaxRAM=1536m) >"$work/$1.log" 2>&1 & ;;
  esac
  pid=$!
}

hz=$(getconf CLK_TCK)
floor_before=$(floor_cpu)
rows=()
for flavour in "${flavours[@]}"; do
  began=$(date +%s%N)
  start_server "$flavour"
  first="" ready=""
  while [[ -z "$ready" ]]; do
    (( $(ms "$began") > 120000 )) && { echo "$flavour: not ready after 120 s" >&2; cat "$work/$flavour.log" >&2; exit 1; }
    if [[ -z "$first" ]] && [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$root/certs/dev/ca.crt" -H 'Content-Type: application/json' \
      --data-binary @"$root/server/src/test/resources/bench/admissionreview-gpu-topology.json" "https://127.0.0.1:$port/mutate" || true)" == 200 ]]; then
      first=$(ms "$began")
    fi
    [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$root/certs/dev/ca.crt" "https://127.0.0.1:$port/q/health/ready" || true)" == 200 ]] \
      && ready=$(ms "$began")
    sleep 0.02
  done
  cpu_ready=$(( $(cpu_ticks) * 1000 / hz ))
  rss_ready=$(rss_mib)
  served=$(bench mutate gpu-topology $((reviews / 500)) 500)
  rss_load=$(rss_mib)
  for f in "${fixtures[@]}"; do bench mutate "$f" $((warmup / 3 > 1 ? warmup / 3 : 2)) >/dev/null; done
  cpu=()
  for f in "${fixtures[@]}"; do
    before=$(cpu_ticks)
    n=$(bench mutate "$f" "$duration")
    cpu+=("$(awk -v t=$(( $(cpu_ticks) - before )) -v n="$n" -v hz="$hz" 'BEGIN { printf "%.1f", (n > 0 ? t / hz * 1e6 / n : 0) }')")
  done
  rss_end=$(rss_mib)
  rows+=("$flavour $first $ready $cpu_ready $rss_ready $served $rss_load $rss_end ${cpu[*]}")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pid=""
done
floor_after=$(floor_cpu)
floor=$(awk -v a="$floor_before" -v b="$floor_after" 'BEGIN { printf "%.1f", (a + b) / 2 }')
echo "nginx floor cpu_us_per_req: $floor_before before, $floor_after after, mean $floor   (loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
echo "flavour first_mutate_ms ready_ms cpu_ms_to_ready rss_mib_ready reviews_at_500/s rss_mib_after_them rss_mib_end | cpu_us_per_mutate (x floor): ${fixtures[*]}"
for r in "${rows[@]}"; do
  awk -v r="$r" -v floor="$floor" 'BEGIN { n = split(r, f, " "); line = f[1] " " f[2] " " f[3] " " f[4] " " f[5] " " f[6] " " f[7] " " f[8] " |";
    for (i = 9; i <= n; i++) line = line " " f[i] (floor > 0 ? sprintf(" (%.1fx)", f[i] / floor) : ""); print line }'
done
