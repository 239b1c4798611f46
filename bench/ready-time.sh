#!/usr/bin/env bash
# Time from launch to a green /q/health/ready (warm-up included) and to the first /mutate answer,
# the server pinned to one CPU, then the CPU time it used until ready and its RSS. Bounded: gives up
# after 60 s; stops what it started.
#   bench/ready-time.sh [java options...]     e.g. bench/ready-time.sh @jvm.args -XX:AOTCache=app.aot
# Port: QUARKUS_HTTP_SSL_PORT (8443). CPU: BENCH_SERVER_CPUS (0). APP_DIR: server/target/quarkus-app.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JDK 25, as the build (.mvn/jdk25.sh); BENCH_JAVA=/path/to/bin/java measures another JVM.
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
port="${QUARKUS_HTTP_SSL_PORT:-8443}"
fixture="$root/server/src/test/resources/bench/admissionreview-gpu-topology.json"
log="$(mktemp)"
start=$(date +%s%N)
# From the app's own directory: an AppCDS archive (-XX:SharedArchiveFile=app-cds.jsa) is only used
# when the class path matches the one it was made with.
(cd "${APP_DIR:-$root/server/target/quarkus-app}" \
  && export GPU_ADMISSION_TLS_CERT="$root/certs/dev/tls.crt" GPU_ADMISSION_TLS_KEY="$root/certs/dev/tls.key" \
  && exec taskset -c "${BENCH_SERVER_CPUS:-0}" "$java" "$@" -jar quarkus-run.jar) >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
curl_args=(-s -o /dev/null -w '%{http_code}' --cacert "$root/certs/dev/ca.crt" --max-time 2)
first_ms="" ready_ms=""
while [ -z "$ready_ms" ]; do
  now=$(( ($(date +%s%N) - start) / 1000000 ))
  [ "$now" -gt 60000 ] && { echo "not ready after 60 s" >&2; cat "$log" >&2; exit 1; }
  if [ -z "$first_ms" ] && [ "$(curl "${curl_args[@]}" -H 'Content-Type: application/json' --data-binary @"$fixture" "https://127.0.0.1:$port/mutate" || true)" = 200 ]; then
    first_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  fi
  if [ "$(curl "${curl_args[@]}" "https://127.0.0.1:$port/q/health/ready" || true)" = 200 ]; then
    ready_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  fi
  sleep 0.05
done
rss_kib=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo "?")
# CPU the server used until ready: unlike the wall clock, other processes on the machine barely move it.
cpu_ms=$(awk -v hz="$(getconf CLK_TCK)" '{ s=$0; sub(/.*\) /, "", s); split(s, f, " "); printf "%d", (f[12] + f[13]) * 1000 / hz }' "/proc/$pid/stat")
echo "READY first_mutate_ms=$first_ms ready_ms=$ready_ms cpu_ms_to_ready=$cpu_ms rss_mib=$((rss_kib / 1024)) loadavg=$(cut -d' ' -f1 /proc/loadavg) $(grep -o 'started in [0-9.]*s' "$log") $(grep -o 'warm-up finished in .*' "$log")"
