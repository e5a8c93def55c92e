"""Placement hints in process: the mutating webhook's answer time for a pod that gets a hint.

For each cluster size (bench.synthetic: 30 pods a node, every node 16 cpu at the bench's 150 %
ratio, about 8 cpu of limit room left on the average node) this loads the cluster into a
ClusterState and times the Mutator on one AdmissionReview per pod size: wall time and the
thread's CPU time per call (on a shared machine the wall p99 is mostly time spent waiting for a
core; the CPU time is the work). Each pod is timed twice: with one node's sums changed before
every call (as after a binding: the hint is computed afresh) and on an unchanged table (pods of one
workload created between two bindings share the remembered answer). The HTTP figures are
bench/wrk_bench.py's hinted scenario, where the table does not change.

    python -m bench.hints                       # 5,000 and 15,000 nodes
    python -m bench.hints --sizes 5000 --calls 500
"""

from __future__ import annotations

import argparse
import gc
import json
import tempfile
import time
from pathlib import Path

from bench.admission import CONFIG, pod_body
from bench.synthetic import write_cluster
from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.cli.configfile import load_config
from limitguard.core.hints import HINT_ANNOTATION
from limitguard.kube.filefeed import load_cluster_file
from limitguard.state.store import ClusterState

# cpu limits: 6 fits most nodes, 8 about half, 9 a quarter (each past maxNodes: the capped In)
POD_CPUS = ("6", "8", "9")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def bench_size(nodes: int, calls: int, work: Path) -> None:
    cluster = work / f"cluster-{nodes}.json"
    write_cluster(cluster, nodes, nodes * 30, min(10_000, nodes * 3))
    state = ClusterState()
    load_cluster_file(state, str(cluster))
    config_file = work / "config.yaml"
    config_file.write_text(CONFIG)
    mutator = Mutator(state, load_config(str(config_file)))
    gc.collect()
    gc.freeze()  # as `serve` does after loading: the loaded state is not scanned by every collection
    print(f"\n== {nodes} nodes")
    print(
        f"{'pod cpu':>8} {'hint':<32} {'table':>8} {'wall p50':>9} {'p99':>7} {'cpu p50':>8} {'p99':>7}  (ms)"
    )
    for cpu in POD_CPUS:
        request = decode_review(pod_body(1, {"cpu": cpu, "memory": "1Gi"}))
        answer = mutator(request)
        note = ""
        for operation in answer.patch.operations() if answer.patch else []:
            value = operation["value"]
            if isinstance(value, dict) and HINT_ANNOTATION in value:
                value = value[HINT_ANNOTATION]
            if isinstance(value, str) and value.startswith("{"):
                found = json.loads(value)
                note = f"{found['operator']} {found['named']} ({found['fit']} of {found['eligible']} fit)"
        for changed in (True, False):
            wall, cpu_time = [], []
            for index in range(calls):
                if changed:  # as after a binding: one node's sums changed, nothing is remembered
                    state.table.mark(f"node-{index % nodes:05d}")
                started, started_cpu = time.perf_counter(), time.thread_time()
                mutator(request)
                cpu_time.append(time.thread_time() - started_cpu)
                wall.append(time.perf_counter() - started)
            print(
                f"{cpu:>8} {note or answer.reason:<32} {'changed' if changed else 'same':>8} "
                f"{percentile(wall, 0.5):>9.3f} {percentile(wall, 0.99):>7.3f} "
                f"{percentile(cpu_time, 0.5):>8.3f} {percentile(cpu_time, 0.99):>7.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="5000,15000", help="node counts, comma-separated")
    parser.add_argument("--calls", type=int, default=1000, help="timed calls per pod size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for nodes in (int(size) for size in args.sizes.split(",")):
            bench_size(nodes, args.calls, Path(work))


if __name__ == "__main__":
    main()
