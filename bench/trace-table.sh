#!/usr/bin/env bash
# Every pod list of the Alibaba trace through every placement, as Markdown tables of mean GPU
# allocation ratios (bench/README.md, "Trace quality"):
#   1. what users get (setup service): fgd-lookahead (the default), binpack, spread and fgd as
#      the allocator chooses (the extender's top node among all feasible nodes, the learned
#      workload), and as kube-scheduler picks with the shipped second scheduler's configuration,
#      the extender called over its JSON API, with the number of seeds where kube-scheduler put
#      every pod on the allocator's node;
#      and fgd given the trace's own distribution (reference only);
#   2. the share tasks alone: fgd and fgd-lookahead (the default) as the allocator chooses, ACK's
#      gpushare extender through kube-scheduler, and fgd through kube-scheduler over JSON with the
#      same check;
#   3. with PAPER=1, the paper's setup (every task placed by the policy, CPU counted).
# SEEDS (default 42-51) for the allocator's runs; SHARES_SEEDS, ORACLE_SEEDS and
# KUBE_SCHEDULER_SEEDS (each SEEDS by default) for the share tasks, fgd given the trace's
# distribution and the kube-scheduler runs over JSON (the slow ones: a seed takes 2.6 times as long
# as the allocator's, most of it in the JSON codec). A run not done (yet) shows as "not run".
# DATA defaults to ../shared/data/alibaba-gpu-v2023; JOBS runs that many simulations at once
# (default 1). Each run's output stays in server/target/trace-table/ (where each pod went in placements/);
# a rerun only does what is missing (a run that has every seed asked is reused, whatever else it
# has). Queued share tasks first, then the other tables in their order, so a run cut short
# leaves whole columns.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0" | sed '$d'; exit 0 ;; esac
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${DATA:-$root/../shared/data/alibaba-gpu-v2023}"
jobs="${JOBS:-1}"
seeds="${SEEDS:-42-51}"
ks_seeds="${KUBE_SCHEDULER_SEEDS:-$seeds}"
shares_seeds="${SHARES_SEEDS:-$seeds}"
oracle_seeds="${ORACLE_SEEDS:-$seeds}"
out="$root/server/target/trace-table"
mkdir -p "$out"
# Build once, before the runs start in parallel.
# Build once; the parallel runs below then skip it (BENCH_NO_BUILD).
. "$root/bench/lib/classpath.sh"
server_test_classpath >/dev/null
export BENCH_NO_BUILD=1

workloads=(default cpu250 gpushare40 gpushare80 gpushare100 multigpu20)
allocator=(
  "fgd-lookahead-simulator|--policy fgd-lookahead --through simulator"
  "fgd-simulator|--policy fgd --through simulator"
  "binpack-simulator|--policy binpack --through simulator"
  "spread-simulator|--policy spread --through simulator"
)
shares=(
  "shares-gpushare|--policy gpushare --through kube-scheduler --tasks shares"
  "shares-fgd-lookahead-simulator|--policy fgd-lookahead --through simulator --tasks shares"
  "shares-fgd-simulator|--policy fgd --through simulator --tasks shares"
)
oracle=("fgd-oracle|--policy fgd --through simulator --workload oracle")
kube_scheduler=(
  "fgd-kube-scheduler|--policy fgd --through kube-scheduler"
  "binpack-kube-scheduler|--policy binpack --through kube-scheduler"
)
kube_scheduler_later=(
  "shares-fgd-kube-scheduler|--policy fgd --through kube-scheduler --tasks shares"
  "spread-kube-scheduler|--policy spread --through kube-scheduler"
)
paper=(
  "paper-fgd|--policy fgd --setup paper --workload oracle"
  "paper-binpack|--policy binpack --setup paper"
  "paper-best-fit|--policy best-fit --setup paper"
  "paper-random|--policy random --setup paper"
  "paper-spread|--policy spread --setup paper"
)

# The figures of seeds FIRST-LAST in a run's output (per-seed lines), one per line.
figures() {
  local file=$1 first=${2%-*} last=${2#*-}
  [[ -f "$file" ]] || return 0
  awk -v first="$first" -v last="$last" -F'[ =]' '/^seed=/ && $2 >= first && $2 <= last {print $2, $4}' "$file" | sort -u
}
has_all() {
  local first=${2%-*} last=${2#*-}
  [[ "$(figures "$1" "$2" | wc -l)" -eq $((last - first + 1)) ]]
}

todo="$out/todo.txt"
: >"$todo"
queue() {
  local range=$1
  shift
  for entry in "$@"; do
    for w in "${workloads[@]}"; do
      local name="${entry%%|*}"
      local log="$out/$w.$name.txt"
      if has_all "$log.part" "$range" && ! has_all "$log" "$range"; then
        mv "$log.part" "$log" # an interrupted run with every seed asked
      fi
      if ! has_all "$log" "$range"; then
        echo "$log ${entry#*|} --nodes $data/openb_node_list_gpu_node.csv --pods $data/openb_pod_list_$w.csv --seeds $range --placements $out/placements/$w.$name" >>"$todo"
      fi
    done
  done
}
queue "$shares_seeds" "${shares[@]}"
queue "$seeds" "${allocator[@]}"
queue "$ks_seeds" "${kube_scheduler[@]}"
queue "$oracle_seeds" "${oracle[@]}"
queue "$ks_seeds" "${kube_scheduler_later[@]}"
if [[ "${PAPER:-0}" == 1 ]]; then
  queue "$seeds" "${paper[@]}"
fi
if [[ -s "$todo" ]]; then
  echo "$(wc -l <"$todo") runs to do, $jobs at a time; progress in $out/*.txt.part" >&2
  # shellcheck disable=SC2016
  xargs -P "$jobs" -L 1 bash -c 'log="$1"; shift; "'"$root"'/bench/simulate-trace.sh" "$@" >"$log.part" 2>&1 && mv "$log.part" "$log"' _ <"$todo"
fi

# The mean of seeds RANGE, as a percentage.
cell() {
  if ! has_all "$out/$1.$2.txt" "$3"; then
    echo "not run"
    return
  fi
  figures "$out/$1.$2.txt" "$3" | awk '{s += $2; n++} END {printf "%.2f %%", 100 * s / n}'
}
# Seeds of RANGE where kube-scheduler put every pod on the node the allocator chose, of all.
same() {
  local w=$1 first=${3%-*} last=${3#*-} same=0 all=0
  if ! has_all "$out/$w.$2-kube-scheduler.txt" "$3"; then
    echo "not run"
    return
  fi
  for ((seed = first; seed <= last; seed++)); do
    all=$((all + 1))
    if cmp -s "$out/placements/$w.$2-kube-scheduler/$seed.txt" "$out/placements/$w.$2-simulator/$seed.txt"; then
      same=$((same + 1))
    fi
  done
  echo "$same/$all"
}

echo "Seeds $seeds; share tasks: seeds $shares_seeds; fgd given the trace's distribution: seeds $oracle_seeds; kube-scheduler over JSON: seeds $ks_seeds."
echo
echo "| pods | fgd-lookahead (the default), allocator | binpack, allocator | spread, allocator | fgd, allocator | binpack, kube-scheduler, seeds $ks_seeds | spread, kube-scheduler, seeds $ks_seeds | fgd, kube-scheduler, seeds $ks_seeds | allocator, seeds $ks_seeds (binpack, spread, fgd) | seeds with every pod on the allocator's node | fgd given the trace's distribution, seeds $oracle_seeds | fgd, allocator, seeds $oracle_seeds |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for w in "${workloads[@]}"; do
  echo "| $w | $(cell "$w" fgd-lookahead-simulator "$seeds") | $(cell "$w" binpack-simulator "$seeds") | $(cell "$w" spread-simulator "$seeds") | $(cell "$w" fgd-simulator "$seeds") |" \
    "$(cell "$w" binpack-kube-scheduler "$ks_seeds") | $(cell "$w" spread-kube-scheduler "$ks_seeds") | $(cell "$w" fgd-kube-scheduler "$ks_seeds") |" \
    "$(cell "$w" binpack-simulator "$ks_seeds"), $(cell "$w" spread-simulator "$ks_seeds"), $(cell "$w" fgd-simulator "$ks_seeds") |" \
    "$(same "$w" binpack "$ks_seeds"), $(same "$w" spread "$ks_seeds"), $(same "$w" fgd "$ks_seeds") | $(cell "$w" fgd-oracle "$oracle_seeds") | $(cell "$w" fgd-simulator "$oracle_seeds") |"
done
echo
echo "| pods, share tasks only | fgd, allocator | gpushare, kube-scheduler | fgd-lookahead, allocator | fgd, kube-scheduler (seeds $ks_seeds) | fgd, allocator (seeds $ks_seeds) | seeds with every pod on the allocator's node |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for w in "${workloads[@]}"; do
  echo "| $w | $(cell "$w" shares-fgd-simulator "$shares_seeds") | $(cell "$w" shares-gpushare "$shares_seeds") | $(cell "$w" shares-fgd-lookahead-simulator "$shares_seeds") |" \
    "$(cell "$w" shares-fgd-kube-scheduler "$ks_seeds") | $(cell "$w" shares-fgd-simulator "$ks_seeds") | $(same "$w" shares-fgd "$ks_seeds") |"
done
if [[ "${PAPER:-0}" == 1 ]]; then
  echo
  echo "| pods, paper's setup | fgd | binpack | best-fit | random | spread |"
  echo "| --- | --- | --- | --- | --- | --- |"
  for w in "${workloads[@]}"; do
    echo "| $w | $(cell "$w" paper-fgd "$seeds") | $(cell "$w" paper-binpack "$seeds") | $(cell "$w" paper-best-fit "$seeds") | $(cell "$w" paper-random "$seeds") | $(cell "$w" paper-spread "$seeds") |"
  done
fi
