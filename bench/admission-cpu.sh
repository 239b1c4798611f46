#!/usr/bin/env bash
# Server CPU per review for /mutate and /validate and each of the load harness' three fixtures:
# starts the jar pinned to one CPU, warms it up, then runs one keep-alive saturation per
# (endpoint, fixture) with ../shared/bench/webhook-bench.sh (wrk pinned to the other CPU) and
# divides the server's CPU time (/proc) by the requests served. Read the figures against the nginx
# floor's cpu_us_per_req from a run-peers.sh run made just before or after (same machine load).
#   bench/admission-cpu.sh [java options...]
# Env: GPU_ADMISSION_PORT (8443), BENCH_HARNESS (../shared/bench), BENCH_DURATION (10),
# BENCH_WARMUP (60 s, split over the runs: the JIT runs on the same CPU), APP_DIR (target/quarkus-app).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
harness="${BENCH_HARNESS:-$root/../shared/bench}"
port="${GPU_ADMISSION_PORT:-8443}"
duration="${BENCH_DURATION:-10}"
warmup="${BENCH_WARMUP:-60}"
app_dir="${APP_DIR:-$root/target/quarkus-app}"
fixtures=(gpu-topology gpu-mem cpu-only)
log="$(mktemp)"
# From the app's own directory, so that -XX:SharedArchiveFile=app-cds.jsa (AppCDS) applies.
(cd "$app_dir" \
  && export GPU_ADMISSION_TLS_CERT="$root/certs/dev/tls.crt" GPU_ADMISSION_TLS_KEY="$root/certs/dev/tls.key" \
  && exec taskset -c 0 java "$@" -jar quarkus-run.jar) >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 120); do
  curl -s -o /dev/null --max-time 2 --cacert "$root/certs/dev/ca.crt" "https://127.0.0.1:$port/q/health/ready" && break
  sleep 0.5
done
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
bench() { # endpoint fixture duration -> requests served
  BENCH_FIXTURE="$root/src/test/resources/bench/admissionreview-$2.json" BENCH_DURATION="$3" BENCH_SKIP_CHECK="${4:-0}" \
    "$harness/webhook-bench.sh" "https://127.0.0.1:$port/$1" 2>/dev/null | sed -n 's/.* requests=\([0-9]*\) .*/\1/p'
}
for f in "${fixtures[@]}"; do
  for e in mutate validate; do bench "$e" "$f" $((warmup / 6 > 1 ? warmup / 6 : 2)) 1 >/dev/null; done
done
hz=$(getconf CLK_TCK)
echo "endpoint fixture requests cpu_us_per_req   (loadavg $(cut -d' ' -f1-3 /proc/loadavg))"
for e in mutate validate; do
  for f in "${fixtures[@]}"; do
    before=$(cpu_ticks)
    requests=$(bench "$e" "$f" "$duration")
    after=$(cpu_ticks)
    echo "$e $f $requests $(awk -v t=$((after - before)) -v n="$requests" -v hz="$hz" 'BEGIN { printf "%.1f", (n > 0 ? t / hz * 1e6 / n : 0) }')"
  done
done
echo "rss_mib $(( $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") / 1024 ))"
