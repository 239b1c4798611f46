#!/usr/bin/env bash
# Scheduler-extender benchmark, end to end over HTTPS (see bench/README.md, "Scheduler extender").
#   bench/extender-bench.sh [NODES] [GPU_PODS]      (defaults 5000 20000)
# 1. starts a mock API server holding NODES GPU nodes (gpu-node-00000…, the names of
#    ../shared/bench/fixtures/extender-args-N.json) and GPU_PODS bound shares;
# 2. starts the packaged server against it and waits until its ledger holds every node;
# 3. runs ../shared/bench/webhook-bench.sh on /extender/filter and /extender/prioritize with the
#    500- and 5000-node ExtenderArgs fixtures.
# Needs `./mvnw -B -DskipTests package` first; ports: API 18580, server $GPU_ADMISSION_PORT (8443).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$root/../shared/bench"
nodes="${1:-5000}"
gpu_pods="${2:-20000}"
port="${GPU_ADMISSION_PORT:-8443}"
work="$(mktemp -d)"
deps="$root/target/bench-classpath.txt"
[[ -s "$deps" ]] || (cd "$root" && ./mvnw -B -q dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$deps")
java -Xmx1g -cp "$root/target/classes:$root/target/test-classes:$(cat "$deps")" \
  io.gpuadmission.bench.ExtenderBenchCluster 18580 "$nodes" "$gpu_pods" >"$work/cluster.log" 2>&1 &
cluster=$!
server=""
trap 'kill $cluster ${server:-} 2>/dev/null || true' EXIT
until grep -q '^ready' "$work/cluster.log"; do sleep 2; done
GPU_ADMISSION_CLUSTER_ENABLED=true QUARKUS_KUBERNETES_CLIENT_API_SERVER_URL=http://127.0.0.1:18580 \
  java -Xmx512m -jar "$root/target/quarkus-app/quarkus-run.jar" >"$work/server.log" 2>&1 &
server=$!
until [[ "$(curl -sk "https://127.0.0.1:$port/extender/inspect" | grep -o '"devs"' | wc -l)" -ge "$nodes" ]]; do sleep 2; done
echo "ledger holds $nodes nodes; server RSS $(ps -o rss= -p $server) KiB"
for n in 500 5000; do
  for verb in filter prioritize; do
    BENCH_SKIP_CHECK=1 BENCH_FIXTURE="$shared/fixtures/extender-args-$n.json" BENCH_CONNECTIONS="${BENCH_CONNECTIONS:-4}" \
      "$shared/webhook-bench.sh" "https://127.0.0.1:$port/extender/$verb" | sed "s/^/nodes=$n /"
  done
done
