#!/usr/bin/env bash
# Server CPU per review for /mutate and /validate and each of the load harness' three fixtures,
# beside the nginx floor measured in the same run (before and after the app, so that a change in
# the machine's load shows): starts the jar pinned to one CPU, warms it up, then runs one
# keep-alive saturation per (endpoint, fixture) with ../shared/bench/webhook-bench.sh (wrk pinned
# to the other CPU) and divides the server's CPU time (/proc) by the requests served.
#   bench/admission-cpu.sh [java options...]
# Env: QUARKUS_HTTP_SSL_PORT (8443), BENCH_HARNESS (../shared/bench), BENCH_DURATION (10),
# BENCH_WARMUP (60 s, split over the runs: the JIT runs on the same CPU), APP_DIR (server/target/quarkus-app),
# BENCH_FLOOR (1; 0 skips the floor), FLOOR_PORT (18843).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JDK 25, as the build (.mvn/jdk25.sh); BENCH_JAVA=/path/to/bin/java measures another JVM.
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
harness="${BENCH_HARNESS:-$root/../shared/bench}"
port="${QUARKUS_HTTP_SSL_PORT:-8443}"
duration="${BENCH_DURATION:-10}"
warmup="${BENCH_WARMUP:-60}"
app_dir="${APP_DIR:-$root/server/target/quarkus-app}"
fixtures=(gpu-topology gpu-mem cpu-only)
log="$(mktemp)"
work="$(mktemp -d)"
pid=""
trap '[[ -n "$pid" ]] && { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }; rm -rf "$log" "$work"' EXIT

# The floor's CPU per request: run-peers.sh with the floor alone, short runs, no fixed rates.
floor_cpu() {
  BENCH_WORK="$work" BENCH_PEERS=floor BENCH_WARMUP=5 BENCH_DURATION="$duration" BENCH_RATES=" " \
    FLOOR_PORT="${FLOOR_PORT:-18843}" "$harness/run-peers.sh" >/dev/null 2>&1 || true
  awk -F'\t' '$2 == "cpu_us_per_req" { v = $3 } END { print v + 0 }' "$work"/results-*.tsv 2>/dev/null
  rm -f "$work"/results-*.tsv
}
floor_before=0
floor_after=0
[[ "${BENCH_FLOOR:-1}" == 1 ]] && floor_before=$(floor_cpu)

# From the app's own directory, so that -XX:SharedArchiveFile=app-cds.jsa (AppCDS) applies.
(cd "$app_dir" \
  && export GPU_ADMISSION_TLS_CERT="$root/certs/dev/tls.crt" GPU_ADMISSION_TLS_KEY="$root/certs/dev/tls.key" \
  && exec taskset -c 0 "$java" "$@" -jar quarkus-run.jar) >"$log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  curl -s -o /dev/null --max-time 2 --cacert "$root/certs/dev/ca.crt" "https://127.0.0.1:$port/q/health/ready" && break
  sleep 0.5
done
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
bench() { # endpoint fixture duration -> requests served
  BENCH_FIXTURE="$root/server/src/test/resources/bench/admissionreview-$2.json" BENCH_DURATION="$3" BENCH_SKIP_CHECK="${4:-0}" \
    "$harness/webhook-bench.sh" "https://127.0.0.1:$port/$1" 2>/dev/null | sed -n 's/.* requests=\([0-9]*\) .*/\1/p'
}
for f in "${fixtures[@]}"; do
  for e in mutate validate; do bench "$e" "$f" $((warmup / 6 > 1 ? warmup / 6 : 2)) 1 >/dev/null; done
done
hz=$(getconf CLK_TCK)
results=()
for e in mutate validate; do
  for f in "${fixtures[@]}"; do
    before=$(cpu_ticks)
    requests=$(bench "$e" "$f" "$duration")
    after=$(cpu_ticks)
    results+=("$e $f $requests $(awk -v t=$((after - before)) -v n="$requests" -v hz="$hz" 'BEGIN { printf "%.1f", (n > 0 ? t / hz * 1e6 / n : 0) }')")
  done
done
rss=$(( $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024 ))
kill "$pid"; wait "$pid" 2>/dev/null || true
pid=""
[[ "${BENCH_FLOOR:-1}" == 1 ]] && floor_after=$(floor_cpu)

floor=$(awk -v a="$floor_before" -v b="$floor_after" 'BEGIN { printf "%.1f", (a + b) / 2 }')
echo "nginx floor cpu_us_per_req: $floor_before before, $floor_after after, mean $floor   (loadavg $(cut -d' ' -f1-3 /proc/loadavg))"
echo "endpoint fixture requests cpu_us_per_req ratio_to_floor"
for r in "${results[@]}"; do
  awk -v r="$r" -v floor="$floor" 'BEGIN { split(r, f, " "); printf "%s %s %s %s %s\n", f[1], f[2], f[3], f[4], (floor > 0 ? sprintf("%.1fx", f[4] / floor) : "-") }'
done
echo "rss_mib $rss"
