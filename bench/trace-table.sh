#!/usr/bin/env bash
# Every pod list of the Alibaba trace through every placement, as Markdown tables of mean GPU
# allocation ratios (bench/README.md, "Trace quality"):
#   1. what users get (setup service): binpack, spread and fgd as the simulator reports the
#      allocator's choice and as kube-scheduler picks with the shipped second scheduler's
#      configuration (the extender over its JSON API), whether kube-scheduler put every pod on the
#      allocator's node, and fgd given the trace's own distribution (reference only);
#   2. the share tasks alone: binpack, fgd and ACK's gpushare extender, through kube-scheduler;
#   3. with PAPER=1, the paper's setup (every task placed by the policy, CPU counted).
# SEEDS (default 42-51) for every run; KUBE_SCHEDULER_SEEDS (default SEEDS) for the three
# kube-scheduler runs of table 1, the slow ones (the JSON wire path). DATA defaults to
# ../shared/data/alibaba-gpu-v2023; JOBS runs that many simulations at once (default 1). Each
# run's output stays in target/trace-table/ (where each pod went in placements/) and a rerun only
# does what is missing; runs are queued cheapest first, so a run cut short has whole columns.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${DATA:-$root/../shared/data/alibaba-gpu-v2023}"
jobs="${JOBS:-1}"
seeds="${SEEDS:-42-51}"
ks_seeds="${KUBE_SCHEDULER_SEEDS:-$seeds}"
out="$root/target/trace-table"
mkdir -p "$out"
# Build once, before the runs start in parallel.
"$root/bench/simulate-trace.sh" --help >/dev/null 2>&1 || true

workloads=(default cpu250 gpushare40 gpushare80 gpushare100 multigpu20)
allocator=(
  "binpack-simulator|--policy binpack --through simulator"
  "spread-simulator|--policy spread --through simulator"
  "fgd-simulator|--policy fgd --through simulator"
  "fgd-oracle|--policy fgd --through simulator --workload oracle"
)
shares=(
  "shares-gpushare|--policy gpushare --through kube-scheduler --tasks shares"
  "shares-binpack|--policy binpack --through kube-scheduler --tasks shares"
  "shares-fgd|--policy fgd --through kube-scheduler --tasks shares"
)
kube_scheduler=(
  "binpack-kube-scheduler|--policy binpack --through kube-scheduler"
  "spread-kube-scheduler|--policy spread --through kube-scheduler"
  "fgd-kube-scheduler|--policy fgd --through kube-scheduler"
)
paper=(
  "paper-fgd|--policy fgd --setup paper --workload oracle"
  "paper-binpack|--policy binpack --setup paper"
  "paper-best-fit|--policy best-fit --setup paper"
  "paper-random|--policy random --setup paper"
  "paper-spread|--policy spread --setup paper"
)

todo="$out/todo.txt"
: >"$todo"
queue() {
  local range=$1
  shift
  for entry in "$@"; do
    for w in "${workloads[@]}"; do
      local name="${entry%%|*}"
      local log="$out/$w.$name.txt"
      if ! grep -q '^mean_allocation_ratio=' "$log" 2>/dev/null; then
        echo "$log ${entry#*|} --nodes $data/openb_node_list_gpu_node.csv --pods $data/openb_pod_list_$w.csv --seeds $range --placements $out/placements/$w.$name" >>"$todo"
      fi
    done
  done
}
queue "$seeds" "${allocator[@]}"
queue "$seeds" "${shares[@]}"
queue "$ks_seeds" "${kube_scheduler[@]}"
if [[ "${PAPER:-0}" == 1 ]]; then
  queue "$seeds" "${paper[@]}"
fi
if [[ -s "$todo" ]]; then
  echo "$(wc -l <"$todo") runs to do, $jobs at a time; progress in $out/*.txt.part" >&2
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
# Seeds of the kube-scheduler runs where every pod went to the node the allocator chose, of all.
same() {
  local w=$1 same=0 all=0
  for f in "$out/placements/$w.$2-kube-scheduler"/*.txt; do
    all=$((all + 1))
    if cmp -s "$f" "$out/placements/$w.$2-simulator/$(basename "$f")"; then
      same=$((same + 1))
    fi
  done
  echo "$same/$all"
}

echo "| pods | binpack, simulator | binpack, kube-scheduler | spread, simulator | spread, kube-scheduler | fgd, simulator | fgd, kube-scheduler | seeds with every pod on the allocator's node (binpack, spread, fgd) | fgd given the trace's distribution (simulator) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for w in "${workloads[@]}"; do
  line=$(row "$w" binpack-simulator binpack-kube-scheduler spread-simulator spread-kube-scheduler fgd-simulator fgd-kube-scheduler)
  echo "$line $(same "$w" binpack), $(same "$w" spread), $(same "$w" fgd) | $(cell "$w" fgd-oracle) |"
done
echo
echo "| pods, share tasks only | binpack, kube-scheduler | fgd, kube-scheduler | gpushare, kube-scheduler |"
echo "| --- | --- | --- | --- |"
for w in "${workloads[@]}"; do
  row "$w" shares-binpack shares-fgd shares-gpushare
done
if [[ "${PAPER:-0}" == 1 ]]; then
  echo
  echo "| pods, paper's setup | fgd | binpack | best-fit | random | spread |"
  echo "| --- | --- | --- | --- | --- | --- |"
  for w in "${workloads[@]}"; do
    row "$w" paper-fgd paper-binpack paper-best-fit paper-random paper-spread
  done
fi
