"""Placement hints in process: the hinted pod's patch size and the mutating webhook's answer time.

For each cluster size (bench.synthetic: 30 pods a node, every node 16 cpu at the bench's 150 %
ratio, about 8 cpu of limit room left on the average node, every node carrying its room labels as
the leader writes them: bench.synthetic) this loads the cluster into a ClusterState and asks the Mutator for one
AdmissionReview per pod size: the patch's bytes (the term names no node, so they must not grow
with the cluster), then the wall time and the thread's CPU time per call (on a shared machine the
wall p99 is mostly time spent waiting for a core; the CPU time is the work), with one node's sums
changed before every call (as after a binding) and on an unchanged table. `--calls 0` prints the
sizes only (no timing).

    python -m bench.hints                       # 5,000 and 15,000 nodes
    python -m bench.hints --sizes 5000 --calls 500
    python -m bench.hints --calls 0             # the patch sizes only
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

from bench.admission import CONFIG, pod_body
from bench.synthetic import write_cluster
from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.cli.configfile import load_config
from limitguard.kube.filefeed import load_cluster_file
from limitguard.state.store import ClusterState

# cpu limits: 6 fits most nodes, 8 about half, 9 a quarter; 30 (and 1 Ti of memory) fits none
POD_CPUS = ("6", "8", "9", "30")


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
    config = load_config(str(config_file))
    mutator = Mutator(state, config)
    gc.collect()
    gc.freeze()  # as `serve` does after loading: the loaded state is not scanned by every collection
    print(f"\n== {nodes} nodes")
    print(
        f"{'pod cpu':>8} {'hint':<24} {'patch B':>8} {'table':>8} {'wall p50':>9} {'p99':>7} "
        f"{'cpu p50':>8} {'p99':>7}  (ms)"
    )
    for cpu in POD_CPUS:
        request = decode_review(pod_body(1, {"cpu": cpu, "memory": "1Ti" if cpu == "30" else "1Gi"}))
        answer = mutator(request)
        size = len(answer.patch.encoded) if answer.patch else 0
        note = answer.reason
        if calls == 0:
            print(f"{cpu:>8} {note:<24} {size:>8}")
        for changed in (True, False) if calls else ():
            wall, cpu_time = [], []
            for index in range(calls):
                if changed:  # as after a binding: one node's sums changed
                    state.table.mark(f"node-{index % nodes:05d}")
                started, started_cpu = time.perf_counter(), time.thread_time()
                mutator(request)
                cpu_time.append(time.thread_time() - started_cpu)
                wall.append(time.perf_counter() - started)
            print(
                f"{cpu:>8} {note:<24} {size:>8} {'changed' if changed else 'same':>8} "
                f"{percentile(wall, 0.5):>9.3f} {percentile(wall, 0.99):>7.3f} "
                f"{percentile(cpu_time, 0.5):>8.3f} {percentile(cpu_time, 0.99):>7.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="5000,15000", help="node counts, comma-separated")
    parser.add_argument(
        "--calls", type=int, default=1000, help="timed calls per pod size (0: the patch sizes only)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for nodes in (int(size) for size in args.sizes.split(",")):
            bench_size(nodes, args.calls, Path(work))


if __name__ == "__main__":
    main()
