#!/usr/bin/env bash
# Every pod list of the Alibaba trace through every placement, seeds 42-51, as Markdown tables of
# mean GPU allocation ratios (bench/README.md, "Trace quality"):
#   1. what users get (setup service): binpack, spread and fgd as the simulator reports the
#      allocator's choice and as kube-scheduler picks with the shipped second scheduler's
#      configuration, and fgd given the trace's own distribution (reference only);
#   2. the share tasks alone: binpack, fgd and ACK's gpushare extender, through kube-scheduler;
#   3. the paper's setup (every task placed by the policy, CPU counted), for comparison with it.
# DATA defaults to ../shared/data/alibaba-gpu-v2023; JOBS runs that many simulations at once
# (default 1). Each run's output stays in target/trace-table/ and a rerun only does what is missing.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${DATA:-$root/../shared/data/alibaba-gpu-v2023}"
jobs="${JOBS:-1}"
out="$root/target/trace-table"
mkdir -p "$out"
# Build once, before the runs start in parallel.
"$root/bench/simulate-trace.sh" --help >/dev/null 2>&1 || true

workloads=(default cpu250 gpushare40 gpushare80 gpushare100 multigpu20)
service=(
  "binpack-simulator|--policy binpack --through simulator"
  "binpack-kube-scheduler|--policy binpack --through kube-scheduler"
  "spread-simulator|--policy spread --through simulator"
  "spread-kube-scheduler|--policy spread --through kube-scheduler"
  "fgd-simulator|--policy fgd --through simulator"
  "fgd-kube-scheduler|--policy fgd --through kube-scheduler"
  "fgd-oracle|--policy fgd --through simulator --workload oracle"
  "shares-binpack|--policy binpack --through kube-scheduler --tasks shares"
  "shares-fgd|--policy fgd --through kube-scheduler --tasks shares"
  "shares-gpushare|--policy gpushare --through kube-scheduler --tasks shares"
  "paper-fgd|--policy fgd --setup paper --workload oracle"
  "paper-binpack|--policy binpack --setup paper"
  "paper-best-fit|--policy best-fit --setup paper"
  "paper-random|--policy random --setup paper"
  "paper-spread|--policy spread --setup paper"
)

todo="$out/todo.txt"
: >"$todo"
for w in "${workloads[@]}"; do
  for entry in "${service[@]}"; do
    name="${entry%%|*}"
    log="$out/$w.$name.txt"
    if ! grep -q '^mean_allocation_ratio=' "$log" 2>/dev/null; then
      echo "$log ${entry#*|} --nodes $data/openb_node_list_gpu_node.csv --pods $data/openb_pod_list_$w.csv --seeds 42-51" >>"$todo"
    fi
  done
done
if [[ -s "$todo" ]]; then
  echo "$(wc -l <"$todo") runs of 10 seeds to do, $jobs at a time; progress in $out/*.txt" >&2
  # shellcheck disable=SC2016
  xargs -P "$jobs" -L 1 bash -c 'log="$1"; shift; "'"$root"'/bench/simulate-trace.sh" "$@" >"$log.part" 2>&1 && mv "$log.part" "$log"' _ <"$todo"
fi

cell() {
  local mean
  mean=$(sed -n 's/^mean_allocation_ratio=\([0-9.]*\).*/\1/p' "$out/$1.$2.txt")
  python3 -c "print(f'{100*$mean:.2f} %')"
}
row() {
  local w=$1
  shift
  local line="| $w |"
  for name in "$@"; do
    line="$line $(cell "$w" "$name") |"
  done
  echo "$line"
}

echo "| pods | binpack, simulator | binpack, kube-scheduler | spread, simulator | spread, kube-scheduler | fgd, simulator | fgd, kube-scheduler | fgd given the trace's distribution (simulator) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for w in "${workloads[@]}"; do
  row "$w" binpack-simulator binpack-kube-scheduler spread-simulator spread-kube-scheduler fgd-simulator fgd-kube-scheduler fgd-oracle
done
echo
echo "| pods, share tasks only | binpack, kube-scheduler | fgd, kube-scheduler | gpushare, kube-scheduler |"
echo "| --- | --- | --- | --- |"
for w in "${workloads[@]}"; do
  row "$w" shares-binpack shares-fgd shares-gpushare
done
echo
echo "| pods, paper's setup | fgd | binpack | best-fit | random | spread |"
echo "| --- | --- | --- | --- | --- | --- |"
for w in "${workloads[@]}"; do
  row "$w" paper-fgd paper-binpack paper-best-fit paper-random paper-spread
done
