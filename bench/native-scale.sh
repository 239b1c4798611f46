#!/usr/bin/env bash
# scale.sh's cluster for the server's native executable (server/target/gpu-admission-*-runner,
# ./mvnw -Pnative package) or, with BENCH_FLAVOUR=jvm, for the JVM build beside it, both with the
# same GC log: the mock API server of Kubernetes' documented limits, the server in a memory limit as
# the Deployment gives it, then time to Ready, the collector's work while syncing (collections,
# their longest and total pause, the heap before them), the heap a full collection leaves and the
# RSS at the end, a bind, and the server CPU per 5,000-node filter and prioritize.
#   bench/native-scale.sh [NODES] [PODS] [GPU_PODS] [IMAGES]     (defaults 5000 150000 30000 40)
# The limit LIMIT (1536m) is given as -XX:MaxRAM (no cgroup here; the native kit's executables read
# none anyway): the JVM takes 60% of it for the heap (jvm.args), the native executable 80% (its
# default). The native executable's GC log is -XX:+PrintGC on its stdout; the JVM's -Xlog:gc. The
# live heap is what the last full collection left (a native executable takes no jcmd): the JVM gets
# one from jcmd GC.run at the end, the native executable the last of its own. Runs at nice 19;
# bounded (BENCH_TIMEOUT s, 900, per wait); stops what it started. Ports: QUARKUS_HTTP_SSL_PORT
# (8443), BENCH_API_PORT (a free port).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/.mvn/jdk25.sh"
nodes="${1:-5000}"
pods="${2:-150000}"
gpu_pods="${3:-30000}"
images="${4:-40}"
limit="${LIMIT:-1536m}"
flavour="${BENCH_FLAVOUR:-native}"
timeout="${BENCH_TIMEOUT:-900}"
port="${QUARKUS_HTTP_SSL_PORT:-8443}"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
api_port="${BENCH_API_PORT:-$(free_port)}"
native="$(ls "$root"/server/target/gpu-admission-*-runner 2>/dev/null | head -1)"
fixture="$root/../shared/bench/fixtures/extender-args-5000.json"
[[ -f "$fixture" ]] || fixture="/work/shared/bench/fixtures/extender-args-5000.json"
work="$(mktemp -d)"
clk="$(getconf CLK_TCK)"
. "$root/bench/lib/classpath.sh"
classpath="$(server_test_classpath)"
(cd "$work" && exec nice -n 19 "$JAVA_HOME/bin/java" -Xmx1g -XX:+UseSerialGC -cp "$classpath" \
  io.gpuadmission.bench.ScaleCluster "$api_port" "$nodes" "$pods" "$gpu_pods" "$images") >"$work/cluster.log" 2>&1 &
cluster=$!
server=""
trap 'kill $cluster ${server:-} 2>/dev/null || true; wait 2>/dev/null || true' EXIT
waitfor() { # description, command...: polls the command every second until it succeeds
  local what="$1" t0=$SECONDS; shift
  until "$@"; do
    (( SECONDS - t0 > timeout )) && { echo "gave up waiting for $what after $timeout s" >&2; tail -n 20 "$work/server.log" >&2; exit 1; }
    kill -0 "$cluster" 2>/dev/null || { echo "mock API server exited" >&2; cat "$work/cluster.log" >&2; exit 1; }
    [[ -z "$server" ]] || kill -0 "$server" 2>/dev/null || { echo "server exited while waiting for $what" >&2; tail -30 "$work/server.log" >&2; exit 1; }
    sleep 1
  done
}
waitfor "the mock API server" grep -q '^ready' "$work/cluster.log"
grep '^ready' "$work/cluster.log"
https() { curl -s --cacert "$root/certs/dev/ca.crt" --cert "$root/certs/dev/scheduler.crt" --key "$root/certs/dev/scheduler.key" --max-time 30 "$@"; }
ticks() { awk '{ s=$0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# Both logs' pause lines: "... Pause Young (...) 100M->50M(200M) 3.456ms" (JVM) or
# "... Pause Full GC (...) 13.00M->12.50M 82.191ms" (native): before, after, pause in ms.
pauses() { sed -n 's/.*Pause \(Young\|Full\|Incremental\)[^)]*) \([0-9.]*\)M->\([0-9.]*\)M[^ ]* \([0-9.]*\)ms.*/\1 \2 \3 \4/p' "$work/gc.log"; }
gc_summary() {
  pauses | awk '{ n++; if ($1 == "Full") { f++; live = $3 } if ($2 > peak) peak = $2; if ($4 > max) max = $4; total += $4 }
    END { printf "collections=%d full=%d longest_pause_ms=%.1f total_pause_ms=%.0f peak_heap_before_gc_mib=%.0f live_after_last_full_gc_mib=%.0f", n, f, max, total, peak, live }'
}

start=$(date +%s%N)
export GPU_ADMISSION_CLUSTER_ENABLED=true QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL="http://127.0.0.1:$api_port" \
  GPU_ADMISSION_TLS_CERT="$root/certs/dev/tls.crt" GPU_ADMISSION_TLS_KEY="$root/certs/dev/tls.key" POD_NAMESPACE=gpu-admission MALLOC_ARENA_MAX=2
case "$flavour" in
  native) [[ -x "$native" ]] || { echo "no native executable: ./mvnw -Pnative package first" >&2; exit 1; }
    (cd "$work" && exec nice -n 19 "$native" "-XX:MaxRAM=$limit" -XX:+PrintGC) >"$work/server.log" 2>&1 &
    server=$!
    ln -s "$work/server.log" "$work/gc.log" ;;
  jvm) (cd "$work" && JAVA_OPTS_APPEND="-XX:MaxRAM=$limit -Xlog:gc:file=$work/gc.log:uptime" exec nice -n 19 "$root/server/target/quarkus-app/run") \
      >"$work/server.log" 2>&1 &
    server=$! ;;
  *) echo "BENCH_FLAVOUR is native or jvm" >&2; exit 2 ;;
esac
ready() { [[ "$(https -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/q/health/ready")" == 200 ]]; }
waitfor "a ready server" ready
ready_ms=$(( ($(date +%s%N) - start) / 1000000 ))
cpu_ms=$(( $(ticks "$server") * 1000 / clk ))
echo "$(date -u +%FT%TZ) $flavour load $(cut -d' ' -f1-3 /proc/loadavg)"
grep '^listed' "$work/cluster.log"
echo "ready_ms=$ready_ms server_cpu_ms_to_ready=$cpu_ms $(gc_summary)"
echo "readiness heap data: $(https "https://127.0.0.1:$port/q/health/ready" | python3 -c 'import json,sys; print([c.get("data") for c in json.load(sys.stdin)["checks"] if c["name"] == "heap"][0])')"

curl -s -o /dev/null -X POST -H 'Content-Type: application/json' "http://127.0.0.1:$api_port/api/v1/namespaces/bench/pods" \
  -d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bind-probe","namespace":"bench"},"spec":{"containers":[{"name":"c","image":"cuda","resources":{"limits":{"aliyun.com/gpu-mem":"4"}}}]},"status":{"phase":"Pending"}}'
uid="$(curl -s "http://127.0.0.1:$api_port/api/v1/namespaces/bench/pods/bind-probe" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])')"
bind() { https -o "$work/bind.json" -H 'Content-Type: application/json' "https://127.0.0.1:$port/extender/bind" \
  -d "{\"PodName\":\"bind-probe\",\"PodNamespace\":\"bench\",\"PodUID\":\"$uid\",\"Node\":\"gpu-node-00001\"}" && grep -q '"Error":""' "$work/bind.json"; }
waitfor "a bind (the leader's Lease)" bind
echo "bind: $(cat "$work/bind.json")"
for verb in filter prioritize; do
  url="https://127.0.0.1:$port/extender/$verb"
  urls=(); for _ in $(seq 1 40); do urls+=("$url"); done
  https -H 'Content-Type: application/json' --data-binary @"$fixture" "${urls[@]:0:10}" >/dev/null   # warm-up
  t0="$(ticks "$server")"
  https -H 'Content-Type: application/json' --data-binary @"$fixture" "${urls[@]}" >/dev/null
  echo "$verb nodes=5000 requests=40 server_cpu_ms_per_request=$(awk -v a="$t0" -v b="$(ticks "$server")" -v c="$clk" 'BEGIN { printf "%.1f", (b - a) / c * 1000 / 40 }')"
done
[[ "$flavour" == jvm ]] && { jcmd "$server" GC.run >/dev/null; sleep 2; }
echo "end: $(gc_summary) rss_mib=$(( $(status_kib "$server" VmRSS) / 1024 )) peak_rss_mib=$(( $(status_kib "$server" VmHWM) / 1024 )) limit=$limit"
grep -E 'heap short|OutOfMemoryError' "$work/server.log" || echo "no 'heap short' warning, no OutOfMemoryError"
