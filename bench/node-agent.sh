#!/usr/bin/env bash
# The node agent's footprint: the packaged agent (node-agent.jar) with the DaemonSet's JVM options,
# pinned to CPU 0, on a full node (110 pods, 8 with GPUs) of a fake kubelet and the mock API
# server; beside it in the same run the JVM floor (same options, a main that sleeps) and the agent
# asking the kubelet once an hour. Prints RSS once idle, CPU over the window, List calls, and the
# CPU of one round against the hourly agent. See NodeAgentFootprint.
#   bench/node-agent.sh [window seconds=120] [settle seconds=30]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
. "$(dirname "${BASH_SOURCE[0]}")/lib/bench-class.sh"
run_bench_class io.gpuadmission.bench.NodeAgentFootprint "$@"
