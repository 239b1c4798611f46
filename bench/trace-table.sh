#!/usr/bin/env bash
# Runs every pod list of the Alibaba trace against every policy (seeds 42-51) and prints a
# Markdown table of mean GPU allocation ratios. DATA defaults to ../shared/data/alibaba-gpu-v2023.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${DATA:-$root/../shared/data/alibaba-gpu-v2023}"
policies=(fgd binpack best-fit random spread)
echo "| pods | fgd | binpack | best-fit | random | spread |"
echo "| --- | --- | --- | --- | --- | --- |"
for pods in "$data"/openb_pod_list_*.csv; do
  row="| $(basename "$pods" .csv) |"
  for policy in "${policies[@]}"; do
    mean=$("$root/bench/simulate-trace.sh" --nodes "$data/openb_node_list_gpu_node.csv" --pods "$pods" --policy "$policy" --seeds 42-51 | tail -1 | sed 's/mean_allocation_ratio=\([0-9.]*\).*/\1/')
    row="$row $(python3 -c "print(f'{100*$mean:.2f} %')") |"
  done
  echo "$row"
done
