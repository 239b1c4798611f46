#!/usr/bin/env bash
# One line per JVM setting under test: the packaged server started pinned to one CPU, time to a
# green /q/health/ready, p50/p99 of the first 5 s at 200 reviews/s right after ready, server CPU
# per review in a 15 s keep-alive saturation (after a 20 s one), peak RSS, p50/p99 at 200/s.
# No floor: compare settings with each other in the same quarter hour, and read CPU beside a
# run-peers.sh floor. Bounded (gives up on readiness after 60 s); stops what it started.
#   bench/jvm-settings.sh LABEL [java options...]
#   e.g. bench/jvm-settings.sh c1 -XX:+UseSerialGC -Xmx96m -XX:TieredStopAtLevel=1 -XX:SharedArchiveFile=app-cds.jsa
# Env: QUARKUS_HTTP_SSL_PORT (8443), APP_DIR (server/target/quarkus-app), BENCH_HARNESS (../shared/bench),
# BENCH_NMT=1: also native memory tracking (costs ~4 MiB itself) and, at the end, what the JVM has
# committed per area (MiB), its loaded classes and threads.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JDK 25, as the build (.mvn/jdk25.sh); BENCH_JAVA=/path/to/bin/java measures another JVM.
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
harness="${BENCH_HARNESS:-$root/../shared/bench}"
port="${QUARKUS_HTTP_SSL_PORT:-8443}"
label="$1"
shift
log="$(mktemp)"
start=$(date +%s%N)
# From the app's own directory, so that -XX:SharedArchiveFile=app-cds.jsa (AppCDS) applies.
(cd "${APP_DIR:-$root/server/target/quarkus-app}" \
  && export GPU_ADMISSION_TLS_CERT="$root/certs/dev/tls.crt" GPU_ADMISSION_TLS_KEY="$root/certs/dev/tls.key" MALLOC_ARENA_MAX=2 \
  && exec taskset -c 0 "$java" ${BENCH_NMT:+-XX:NativeMemoryTracking=summary} "$@" -jar quarkus-run.jar) >"$log" 2>&1 &
pid=$!
sampler=""
trap 'kill $sampler "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log" "$log.peak"' EXIT
ready=""
while [ -z "$ready" ]; do
  now=$(( ($(date +%s%N) - start) / 1000000 ))
  [ "$now" -gt 60000 ] && { echo "not ready after 60 s" >&2; cat "$log" >&2; exit 1; }
  if [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$root/certs/dev/ca.crt" --max-time 2 "https://127.0.0.1:$port/q/health/ready" || true)" = 200 ]; then
    ready=$now
  fi
  sleep 0.05
done
url="https://127.0.0.1:$port/mutate"
latency() { grep -o 'p50_ms=[0-9.]* p99_ms=[0-9.]*' || true; }
first=$(BENCH_RATE=200 BENCH_CONNECTIONS=10 BENCH_DURATION=5 BENCH_SKIP_CHECK=1 "$harness/webhook-bench.sh" "$url" 2>/dev/null | latency)
BENCH_DURATION=20 BENCH_SKIP_CHECK=1 "$harness/webhook-bench.sh" "$url" >/dev/null 2>&1
rss() { awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$pid/status"; }
echo 0 >"$log.peak"
(while kill -0 "$pid" 2>/dev/null; do r=$(rss); [ "$r" -gt "$(cat "$log.peak")" ] && echo "$r" >"$log.peak"; sleep 0.5; done) &
sampler=$!
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
before=$(ticks)
requests=$(BENCH_DURATION=15 BENCH_SKIP_CHECK=1 "$harness/webhook-bench.sh" "$url" 2>/dev/null | sed -n 's/.* requests=\([0-9]*\) .*/\1/p')
after=$(ticks)
cpu=$(awk -v t=$((after - before)) -v n="$requests" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (n > 0 ? t / hz * 1e6 / n : 0) }')
rate200=$(BENCH_RATE=200 BENCH_CONNECTIONS=10 BENCH_DURATION=15 BENCH_SKIP_CHECK=1 "$harness/webhook-bench.sh" "$url" 2>/dev/null | latency)
echo "$label ready_ms=$ready first5s_at200[$first] cpu_us_per_review=$cpu rss_peak_mib=$(cat "$log.peak") rss_end_mib=$(rss)" \
  "at200[$rate200] loadavg=$(cut -d' ' -f1 /proc/loadavg) $(grep -o 'started in [0-9.]*s' "$log" || true)"
if [ -n "${BENCH_NMT:-}" ]; then
  echo "$label committed_mib[$(jcmd "$pid" VM.native_memory summary | sed -nE 's/^-? *([A-Za-z ]+) \(reserved=[0-9]+KB, committed=([0-9]+)KB\)$/\1=\2/p; s/^Total: reserved=[0-9]+KB, committed=([0-9]+)KB$/Total=\1/p' \
    | awk -F= '$2 >= 1024 {gsub(/ /, "", $1); printf "%s%s=%d", sep, $1, $2 / 1024; sep=" "}')]" \
    "$(jcmd "$pid" VM.metaspace | grep -m1 -o '[0-9]* classes ([0-9]* shared)') threads=$(ls "/proc/$pid/task" | wc -l)"
fi
