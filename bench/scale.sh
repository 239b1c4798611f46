#!/usr/bin/env bash
# Scale benchmark: the packaged server (server/target/quarkus-app/run: the shipped jvm.args and AOT cache)
# against a mock API server of Kubernetes' documented limits, in a memory limit as the Deployment
# gives it (see bench/README.md, "Memory").
#   bench/scale.sh [NODES] [PODS] [GPU_PODS] [IMAGES]     (defaults 5000 150000 30000 40)
# 1. starts io.gpuadmission.bench.ScaleCluster: NODES GPU nodes with IMAGES images each, PODS pods
#    of which GPU_PODS bound 4 GiB shares, the rest a Deployment's CPU pods; it answers LISTs of
#    nodes and pods in pages and prints each LIST it answered (pages and the limit asked);
# 2. starts the server with the container's memory limit LIMIT (1536m, the shipped Deployment's).
#    No cgroup here: the limit is emulated with -XX:MaxRAM=LIMIT, which the JVM sizes its heap
#    from exactly as from a cgroup limit; the RSS is measured against LIMIT;
# 3. reports: time (wall and server CPU) to a green /q/health/ready, the GC log's peak heap while
#    syncing, heap and RSS in steady state (after a full collection), a bind through
#    /extender/bind of a pod created then, the server CPU per /extender/filter and /prioritize of
#    the 5,000-node ExtenderArgs, then a relist (the API server restarted; watches answered 410
#    Gone), its peak heap and the steady heap and RSS after it.
# Needs `./mvnw -B -DskipTests package` first. Runs everything at nice 19; bounded (gives up after
# BENCH_TIMEOUT s, 900, per wait); stops what it started. Ports: server QUARKUS_HTTP_SSL_PORT (8443),
# API server BENCH_API_PORT (a free port). LIMIT=1g bench/scale.sh ... measures another limit.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$root/.mvn/jdk25.sh"
nodes="${1:-5000}"
pods="${2:-150000}"
gpu_pods="${3:-30000}"
images="${4:-40}"
limit="${LIMIT:-1536m}"
timeout="${BENCH_TIMEOUT:-900}"
port="${QUARKUS_HTTP_SSL_PORT:-8443}"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
api_port="${BENCH_API_PORT:-$(free_port)}"
app="${APP_DIR:-$root/server/target/quarkus-app}"
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
    (( SECONDS - t0 > timeout )) && { echo "gave up waiting for $what after $timeout s" >&2; tail -n 20 "$work/server.log" >&2; tail -n 20 "$work/cluster.log" >&2; exit 1; }
    kill -0 "$cluster" 2>/dev/null || { echo "mock API server exited" >&2; cat "$work/cluster.log" >&2; exit 1; }
    [[ -z "$server" ]] || kill -0 "$server" 2>/dev/null || { echo "server exited while waiting for $what" >&2; tail -30 "$work/server.log" >&2; exit 1; }
    sleep 1
  done
}
waitfor "the mock API server" grep -q '^ready' "$work/cluster.log"
grep '^ready' "$work/cluster.log"
# As kube-scheduler calls the extender: with its client certificate (the extender refuses others).
https() { curl -s --cacert "$root/certs/dev/ca.crt" --cert "$root/certs/dev/scheduler.crt" --key "$root/certs/dev/scheduler.key" --max-time 30 "$@"; }
ticks() { awk '{ s=$0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
# Heap figures from the GC log (-Xlog:gc): "Pause Young (Allocation Failure) 120M->80M(200M)".
heap() { # first-line: peak before, peak after, collections since that line
  tail -n +"$1" "$work/gc.log" | sed -n 's/.*Pause.* \([0-9]*\)M->\([0-9]*\)M(\([0-9]*\)M).*/\1 \2 \3/p' \
    | awk '{ if ($1 > b) b = $1; if ($2 > a) a = $2; if ($3 > c) c = $3; n++ } END { printf "peak_heap_used_mib=%d peak_live_after_gc_mib=%d peak_heap_committed_mib=%d gcs=%d", b, a, c, n }'
}
steady() { # a full collection, then the heap it left and the RSS
  jcmd "$server" GC.run >/dev/null
  sleep 2
  local live
  live="$(sed -n 's/.*Pause Full.* [0-9]*M->\([0-9]*\)M(\([0-9]*\)M).*/\1/p' "$work/gc.log" | tail -1)"
  echo "steady_live_heap_mib=$live rss_mib=$(( $(status_kib "$server" VmRSS) / 1024 )) peak_rss_mib=$(( $(status_kib "$server" VmHWM) / 1024 )) limit=$limit"
}

start=$(date +%s%N)
(cd "$work" && export GPU_ADMISSION_CLUSTER_ENABLED=true QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL="http://127.0.0.1:$api_port" \
  GPU_ADMISSION_TLS_CERT="$root/certs/dev/tls.crt" GPU_ADMISSION_TLS_KEY="$root/certs/dev/tls.key" POD_NAMESPACE=gpu-admission \
  JAVA_OPTS_APPEND="-XX:MaxRAM=$limit -Xlog:gc:file=$work/gc.log:uptime" && exec nice -n 19 "$app/run") >"$work/server.log" 2>&1 &
server=$!
ready() { [[ "$(https -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/q/health/ready")" == 200 ]]; }
waitfor "a ready server" ready
ready_ms=$(( ($(date +%s%N) - start) / 1000000 ))
cpu_ms=$(( $(ticks "$server") * 1000 / clk ))
echo "$(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
grep '^listed' "$work/cluster.log"
echo "ready_ms=$ready_ms server_cpu_ms_to_ready=$cpu_ms $(heap 1) max_heap_mib=$(jcmd "$server" VM.flags | grep -o 'MaxHeapSize=[0-9]*' | awk -F= '{ print int($2 / 1048576) }')"
grep -o 'cluster read: .*' "$work/server.log" || true
echo "after sync: $(steady)"

# A bind: a pending 4 GiB share pod created now (the pod informer's watch sees it), bound to a node.
curl -s -o /dev/null -X POST -H 'Content-Type: application/json' "http://127.0.0.1:$api_port/api/v1/namespaces/bench/pods" \
  -d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bind-probe","namespace":"bench"},"spec":{"containers":[{"name":"c","image":"cuda","resources":{"limits":{"aliyun.com/gpu-mem":"4"}}}]},"status":{"phase":"Pending"}}'
uid="$(curl -s "http://127.0.0.1:$api_port/api/v1/namespaces/bench/pods/bind-probe" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])')"
bind() { https -o "$work/bind.json" -H 'Content-Type: application/json' "https://127.0.0.1:$port/extender/bind" \
  -d "{\"PodName\":\"bind-probe\",\"PodNamespace\":\"bench\",\"PodUID\":\"$uid\",\"Node\":\"gpu-node-00001\"}" && grep -q '"Error":""' "$work/bind.json"; }
waitfor "a bind (the leader's Lease)" bind
echo "bind: $(cat "$work/bind.json") pod annotations: $(curl -s "http://127.0.0.1:$api_port/api/v1/namespaces/bench/pods/bind-probe" | python3 -c 'import json,sys; a=json.load(sys.stdin)["metadata"].get("annotations",{}); print({k: v for k, v in a.items() if k.startswith("ALIYUN")})')"

# Filter and prioritize of the 5,000-node ExtenderArgs: server CPU per request, on one kept-alive
# connection (curl sends the same body to the URL repeated).
for verb in filter prioritize; do
  url="https://127.0.0.1:$port/extender/$verb"
  urls=(); for _ in $(seq 1 40); do urls+=("$url"); done
  https -H 'Content-Type: application/json' --data-binary @"$fixture" "${urls[@]:0:10}" >/dev/null   # warm-up
  t0="$(ticks "$server")"
  https -H 'Content-Type: application/json' --data-binary @"$fixture" "${urls[@]}" >/dev/null
  echo "$verb nodes=5000 requests=40 server_cpu_ms_per_request=$(awk -v a="$t0" -v b="$(ticks "$server")" -v c="$clk" 'BEGIN { printf "%.1f", (b - a) / c * 1000 / 40 }')"
done

# A relist: the API server restarts, resumed watches are answered 410 Gone, the informers list again.
gc0=$(( $(wc -l <"$work/gc.log") + 1 ))
touch "$work/RELIST"
relisted() { sed -n '/^restarted/,$p' "$work/cluster.log" | grep -q '^listed pods'; }
waitfor "the relist" relisted
sleep 5
echo "relist: $(sed -n '/^restarted/,$p' "$work/cluster.log" | grep '^listed' | tr '\n' ' ')"
echo "relist: $(heap "$gc0")"
echo "after relist: $(steady)"
grep -E 'heap short|OutOfMemoryError' "$work/server.log" || echo "no 'heap short' warning, no OutOfMemoryError"
echo "work dir: $work"
