#!/usr/bin/env bash
# The device plugin's call latency: the packaged agent (node-agent.jar) with the DaemonSet's JVM
# options, pinned to CPU 0, on a full node (110 pods in its cache), driven over its Unix socket as
# the v1.32 kubelet admits GPU containers (GetPreferredAllocation, then Allocate). Prints p50/p99/max
# of both beside GetDevicePluginOptions on the same connection (the baseline), wrong answers, and
# the API server requests made while the calls were under way. See DevicePluginCalls.
#   bench/device-plugin-calls.sh [pods=300] [warm-up pods=50]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
. "$(dirname "${BASH_SOURCE[0]}")/lib/bench-class.sh"
run_bench_class io.gpuadmission.bench.DevicePluginCalls "$@"
