"""What the leader's policy reports hold in memory: the report objects of one pass and what the writer
keeps of the reports the cluster holds, counted with tracemalloc (bytes, not time: any machine gives
the same figures).

A synthetic cluster of N nodes (16 cpu, 64Gi), each with three pods of 6 cpu and 8Gi limits, under
cpu and memory ratios of 100%: every node is over its cpu ratio, so every node report carries a
fail with its top pods (the largest report limitguard writes for a node).

Run: `python -m bench.reports_memory --nodes 5000`. Figures: docs/observability.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import tracemalloc

from limitguard.core.config import Config, LimitAwareConfig, ReportsApi, ReportsConfig
from limitguard.core.reports.policyreport import REPORT_APIS
from limitguard.kube.reports.desired import DesiredReports
from limitguard.kube.reports.writer import held
from limitguard.state.store import ClusterState
from limitguard.testing.builders import container, node, pod


def cluster(nodes: int) -> ClusterState:
    state = ClusterState()
    for index in range(nodes):
        state.upsert_node(node(f"node-{index:05d}", cpu="16", memory="64Gi", uid=f"uid-node-{index:05d}"))
    limits = {"cpu": "6", "memory": "8Gi"}
    for index in range(nodes * 3):
        name = f"node-{index % nodes:05d}"
        state.upsert_pod(
            pod(
                f"p{index}",
                namespace="shop",
                node_name=name,
                uid=f"uid-p{index}",
                containers=[container("c", limits=limits)],
            )
        )
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


def measure(nodes: int) -> dict[str, float]:
    state = cluster(nodes)
    config = Config(
        limit_aware=LimitAwareConfig(default_ratios={"cpu": 100, "memory": 100}),
        reports=ReportsConfig(enabled=True),
    )
    desired = DesiredReports(REPORT_APIS[ReportsApi.OPENREPORTS], config, state)
    gc.collect()
    tracemalloc.start()
    reports = asyncio.run(desired.compute()).reports
    gc.collect()
    objects = tracemalloc.get_traced_memory()[0]
    observed = {key: held(report) for key, report in reports.items()}
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - objects
    tracemalloc.stop()
    return {
        "reports": len(reports),
        "objectsMB": objects / 1e6,
        "observedMB": kept / 1e6,
        "perNodeKB": (objects + kept) / len(observed) / 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    args = parser.parse_args()
    figures = measure(args.nodes)
    print(
        ", ".join(
            f"{name} {value:.1f}" if isinstance(value, float) else f"{name} {value}"
            for name, value in figures.items()
        )
    )


if __name__ == "__main__":
    main()
