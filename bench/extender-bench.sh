#!/usr/bin/env bash
# Scheduler-extender benchmark, end to end over HTTPS, beside the nginx floor of ../shared/bench
# (see bench/README.md, "Extender").
#   bench/extender-bench.sh [NODES] [GPU_PODS]      (defaults 5000 20000)
# 1. starts a mock API server holding NODES GPU nodes (gpu-node-00000…, the names of
#    ../shared/bench/fixtures/extender-args-N.json) and GPU_PODS bound shares;
# 2. for each packaged server in APP_DIRS (default server/target/quarkus-app; give two, e.g. the build
#    before a change and after, to compare them in one run): starts it against that cluster,
#    pinned to CPU 0 with a GC log, and waits until its ledger holds every node;
# 3. for the 500- and 5000-node ExtenderArgs: the nginx floor (TLS + HTTP, a fixed answer) takes
#    the same body first, then /extender/filter and /extender/prioritize: a warm-up, a keep-alive
#    saturation run (server CPU per request from /proc), a fixed-rate run (latency percentiles),
#    each with the GC pauses the server logged during it; then the server is stopped.
# Needs `./mvnw -B -DskipTests package` first. Ports: server $QUARKUS_HTTP_SSL_PORT (8443), API
# BENCH_API_PORT and floor FLOOR_PORT (default: free ports picked at start). Knobs: BENCH_RATE (25 req/s),
# BENCH_RATE_DURATION (20 s), BENCH_SAT_DURATION (10 s), BENCH_WARMUP (15 s per endpoint),
# BENCH_CONNECTIONS (2), BENCH_JAVA_OPTS (-Xmx512m), BENCH_FLOOR (1; 0 skips the floor).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# JDK 25, as the build (.mvn/jdk25.sh); BENCH_JAVA=/path/to/bin/java measures another JVM.
. "$root/.mvn/jdk25.sh"
java="${BENCH_JAVA:-$JAVA_HOME/bin/java}"
shared="${BENCH_HARNESS:-$root/../shared/bench}"
nodes="${1:-5000}"
gpu_pods="${2:-20000}"
port="${QUARKUS_HTTP_SSL_PORT:-8443}"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
api_port="${BENCH_API_PORT:-$(free_port)}"
floor_port="${FLOOR_PORT:-$(free_port)}"
apps="${APP_DIRS:-$root/server/target/quarkus-app}"
rate="${BENCH_RATE:-25}"
rate_s="${BENCH_RATE_DURATION:-20}"
sat_s="${BENCH_SAT_DURATION:-10}"
warm_s="${BENCH_WARMUP:-15}"
conns="${BENCH_CONNECTIONS:-2}"
work="$(mktemp -d)"
clk="$(getconf CLK_TCK)"
. "$root/bench/lib/classpath.sh"
classpath="$(server_test_classpath)"
# The mock cluster is this build's code: always on JDK 25, whichever JVM the server runs on.
"$JAVA_HOME/bin/java" -Xmx1g -cp "$classpath" \
  io.gpuadmission.bench.ExtenderBenchCluster "$api_port" "$nodes" "$gpu_pods" >"$work/cluster.log" 2>&1 &
cluster=$!
server=""
floor=""
trap 'kill $cluster ${server:-} ${floor:-} 2>/dev/null || true' EXIT
until grep -q '^ready' "$work/cluster.log" 2>/dev/null; do
  kill -0 "$cluster" 2>/dev/null && ! grep -q 'Exception in thread "main"' "$work/cluster.log" || { cat "$work/cluster.log" >&2; exit 1; }
  sleep 2
done
if [[ "${BENCH_FLOOR:-1}" == "1" ]]; then
  mkdir -p "$work/nginx/tmp"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
    -keyout "$work/nginx/tls.key" -out "$work/nginx/tls.crt" >/dev/null 2>&1
  sed -e "s|@WORK@|$work/nginx|g" -e "s|@PORT@|$floor_port|g" "$shared/peers/nginx-floor/nginx.conf.template" \
    | awk -v b="$(tr -d '\n' <"$shared/fixtures/floor-response.json")" '{ gsub(/@BODY@/, b); print }' >"$work/nginx/nginx.conf"
  taskset -c 0 nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" >"$work/nginx/out.log" 2>&1 &
  floor=$!
  sleep 1
fi

ticks() { awk '{ s=$0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
# GC pauses logged since line $1 of the GC log: count and longest.
pauses() { tail -n +"$1" "$work/gc.log" | awk '/Pause/ { n++; ms = $NF + 0; if (ms > max) max = ms } END { printf "gc_pauses=%d gc_max_ms=%.1f", n, max }'; }
get() { sed -n "s|.* $1=\([^ ]*\).*|\1|p" <<<" $2"; }
# One endpoint: saturation (CPU per request) then the fixed rate (latency), each with its GC pauses.
measure() {   # label pid url fixture
  local label="$1" pid="$2" url="$3" fixture="$4" t0 line reqs cpu gc0
  gc0=$(( $(wc -l <"$work/gc.log") + 1 ))
  t0="$(ticks "$pid")"
  line="$(BENCH_SKIP_CHECK=1 BENCH_FIXTURE="$fixture" BENCH_CONNECTIONS=4 BENCH_DURATION="$sat_s" "$shared/webhook-bench.sh" "$url")"
  reqs="$(get requests "$line")"
  cpu="$(awk -v a="$t0" -v b="$(ticks "$pid")" -v r="$reqs" -v c="$clk" 'BEGIN { printf "%.1f", (b - a) / c * 1e6 / r }')"
  echo "$label saturation req/s=$(get req/s "$line") cpu_us_per_req=$cpu $([[ $label == *floor* ]] || pauses "$gc0")"
  gc0=$(( $(wc -l <"$work/gc.log") + 1 ))
  line="$(BENCH_SKIP_CHECK=1 BENCH_FIXTURE="$fixture" BENCH_CONNECTIONS="$conns" BENCH_RATE="$rate" BENCH_DURATION="$rate_s" "$shared/webhook-bench.sh" "$url")"
  echo "$label rate=$rate requests=$(get requests "$line") p50_ms=$(get p50_ms "$line") p99_ms=$(get p99_ms "$line") p99.9_ms=$(get p99.9_ms "$line") max_ms=$(get max_ms "$line") $([[ $label == *floor* ]] || pauses "$gc0")"
}

run=0
for app in $apps; do
  run=$((run + 1))
  # shellcheck disable=SC2086
  # wrk cannot present a client certificate: the caller check is off for the measured server (it
  # costs one map lookup per request once kube-scheduler's certificate has been verified).
  GPU_ADMISSION_EXTENDER_CALLER_REQUIRED=false \
  GPU_ADMISSION_CLUSTER_ENABLED=true QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL=http://127.0.0.1:$api_port \
    taskset -c 0 "$java" ${BENCH_JAVA_OPTS:--Xmx512m} -Xlog:gc:file="$work/gc.log":uptime -jar "$app/quarkus-run.jar" >"$work/server.log" 2>&1 &
  server=$!
  until [[ "$(curl -sk "https://127.0.0.1:$port/extender/inspect" | grep -o '"devs"' | wc -l)" -ge "$nodes" ]]; do sleep 2; done
  echo "$(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg); run $run: app $app; ledger holds $nodes nodes; server RSS $(ps -o rss= -p "$server") KiB"
  for n in 500 5000; do
    fixture="$shared/fixtures/extender-args-$n.json"
    for verb in filter prioritize; do
      BENCH_SKIP_CHECK=1 BENCH_FIXTURE="$fixture" BENCH_CONNECTIONS=4 BENCH_DURATION="$warm_s" \
        "$shared/webhook-bench.sh" "https://127.0.0.1:$port/extender/$verb" >/dev/null
    done
    [[ -n "$floor" ]] && measure "run=$run floor nodes=$n" "$floor" "https://127.0.0.1:$floor_port/extender/filter" "$fixture"
    for verb in filter prioritize; do
      measure "run=$run $verb nodes=$n" "$server" "https://127.0.0.1:$port/extender/$verb" "$fixture"
    done
  done
  echo "$(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg); server RSS $(ps -o rss= -p "$server") KiB; GC log $work/gc-$run.log"
  kill "$server" && wait "$server" 2>/dev/null || true
  mv "$work/gc.log" "$work/gc-$run.log"
  server=""
done
