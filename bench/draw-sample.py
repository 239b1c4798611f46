#!/usr/bin/env python3
"""Draws a 100-node sample of the Alibaba GPU trace the way ../shared/data/live-sample-seed7/README.md describes.

  bench/draw-sample.py SEED DIR [DATA]     # writes DIR/nodes.csv and DIR/pods.csv

Nodes: 100 of openb_node_list_gpu_node.csv, stratified by GPU model x GPU count in the cluster's
proportions (largest remainders), drawn with SEED. Pods: the share tasks of
openb_pod_list_default.csv (one GPU, part of it) in the sample's share of the cluster's GPUs,
drawn with SEED among those whose gpu_spec the sample's models can serve. Rows are copied verbatim.
Replay a sample as the live one was (bench/README.md, "A 100-node sample against a real
kube-scheduler"): bench/simulate-trace.sh --nodes DIR/nodes.csv --pods DIR/pods.csv --tasks shares
--memory-requests off --max-pods 256 --seeds 42-51 (seed 42's order is the live replay's procedure).
"""
import collections
import csv
import os
import random
import sys

if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
seed, out = int(sys.argv[1]), sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
data = sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, "..", "..", "shared", "data", "alibaba-gpu-v2023")
rng = random.Random(seed)

nodes = list(csv.DictReader(open(os.path.join(data, "openb_node_list_gpu_node.csv"))))
groups = collections.defaultdict(list)
for node in nodes:
    groups[(node["model"], node["gpu"])].append(node)
quota = {kind: 100 * len(members) / len(nodes) for kind, members in groups.items()}
take = {kind: int(q) for kind, q in quota.items()}
for kind in sorted(quota, key=lambda k: quota[k] - take[k], reverse=True)[: 100 - sum(take.values())]:
    take[kind] += 1
chosen = []
for kind in sorted(groups):
    chosen += rng.sample(groups[kind], take[kind])
chosen.sort(key=lambda n: n["sn"])

pods = list(csv.DictReader(open(os.path.join(data, "openb_pod_list_default.csv"))))


def is_share(pod):
    return int(pod["num_gpu"]) == 1 and 0 < int(pod["gpu_milli"]) < 1000


models = {node["model"] for node in chosen}
servable = [p for p in pods if is_share(p) and (p["gpu_spec"] == "" or any(m in models for m in p["gpu_spec"].split("|")))]
gpus = sum(int(n["gpu"]) for n in chosen)
count = round(sum(1 for p in pods if is_share(p)) * gpus / sum(int(n["gpu"]) for n in nodes))
drawn = sorted(rng.sample(servable, count), key=lambda p: p["name"])

os.makedirs(out, exist_ok=True)
for name, rows, fields in (("nodes.csv", chosen, nodes[0].keys()), ("pods.csv", drawn, pods[0].keys())):
    with open(os.path.join(out, name), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fields))
        writer.writeheader()
        writer.writerows(rows)
print(f"seed {seed}: {len(chosen)} nodes, {gpus} GPUs, {len(drawn)} share tasks in {out}")
