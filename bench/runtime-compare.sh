#!/usr/bin/env bash
# Runtimes side by side in one run, alternated round by round: for each, time to the first /mutate
# answer and to ready (bench/ready-time.sh), then the first 5 s at 200 reviews/s, CPU per review in
# keep-alive saturation, RSS peak and RSS after 15 s at 200 reviews/s (bench/jvm-settings.sh), all
# pinned to CPU 0; the nginx floor's CPU per request (../shared/bench/run-peers.sh) before and after
# each round. One line per measurement; read each figure beside the floor and load of its round.
#   bench/runtime-compare.sh [ROUNDS]            (default 2)
# Runtimes: RUNTIMES="label|java|app dir|java options;..." (the options are read from the app dir,
# so @jvm.args is that build's). Default: this build on JDK 25 with its AOT cache and options, the
# same without the cache, and without the cache or compact headers; with BASE_APP (an app dir built
# by JDK 17, e.g. main's) also BASE_JAVA (default /usr/lib/jvm/java-17-openjdk-amd64/bin/java) with
# the Deployment's JVM options of then. Env as the two scripts: QUARKUS_HTTP_SSL_PORT, BENCH_HARNESS.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/.mvn/jdk25.sh"
harness="${BENCH_HARNESS:-$root/../shared/bench}"
[[ -x "$harness/webhook-bench.sh" ]] || { echo "no load harness at $harness (set BENCH_HARNESS)" >&2; exit 2; }
command -v wrk >/dev/null && command -v nginx >/dev/null || { echo "needs wrk and nginx (apt-get install wrk nginx)" >&2; exit 2; }
rounds="${1:-2}"
app="$root/server/target/quarkus-app"
jdk25="$JAVA_HOME/bin/java"
jdk17_options="-XX:+UseSerialGC -Xms32m -Xmx96m -XX:MaxDirectMemorySize=32m -XX:+ExitOnOutOfMemoryError -XX:TrimNativeHeapInterval=5000"
default="jdk25-aot-coh|$jdk25|$app|@jvm.args -XX:AOTCache=app.aot -XX:AOTMode=on"
default+=";jdk25-coh|$jdk25|$app|@jvm.args"
default+=";jdk25|$jdk25|$app|@jvm.args -XX:-UseCompactObjectHeaders"
if [[ -n "${BASE_APP:-}" ]]; then
  default="jdk17|${BASE_JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}|$BASE_APP|$jdk17_options;$default"
fi
IFS=';' read -r -a runtimes <<<"${RUNTIMES:-$default}"

floor_cpu() {
  local work
  work="$(mktemp -d)"
  BENCH_WORK="$work" BENCH_PEERS=floor BENCH_WARMUP=5 BENCH_DURATION=10 BENCH_RATES=" " \
    FLOOR_PORT="${FLOOR_PORT:-18843}" "$harness/run-peers.sh" >/dev/null 2>&1 || true
  awk -F'\t' '$2 == "cpu_us_per_req" { v = $3 } END { print v + 0 }' "$work"/results-*.tsv 2>/dev/null
  rm -rf "$work"
}

for round in $(seq 1 "$rounds"); do
  echo "round $round floor_cpu_us_per_req=$(floor_cpu) loadavg=$(cut -d' ' -f1 /proc/loadavg) $(date -u +%T)"
  for spec in "${runtimes[@]}"; do
    IFS='|' read -r label java dir options <<<"$spec"
    # shellcheck disable=SC2086
    echo "round $round $label $(BENCH_JAVA="$java" APP_DIR="$dir" MALLOC_ARENA_MAX=2 "$root/bench/ready-time.sh" $options)"
    # shellcheck disable=SC2086
    echo "round $round $(BENCH_JAVA="$java" APP_DIR="$dir" "$root/bench/jvm-settings.sh" "$label" $options)"
  done
done
echo "end floor_cpu_us_per_req=$(floor_cpu) loadavg=$(cut -d' ' -f1 /proc/loadavg) $(date -u +%T)"
