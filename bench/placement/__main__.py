"""python -m bench.placement: run the scenarios in each mode and print the figures (see __init__)."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import sys

import orjson

from bench.placement import __doc__ as DOC
from bench.placement.live import HINT_MODES, supports_hints
from bench.placement.run import MODES, ApiDelays, Result, run_one
from bench.placement.scenarios import SCENARIOS, owned
from bench.tables import HEADER, median_row

# (scenario, mode, the pods of one ReplicaSet): (stranded at most, as a fraction of the pods; denied per
# placed pod at most). Hints also keep node writes at one per binding on average and never past the rate.
GOALS = {
    **{(s, mode, False): (0.0, 0.05) for s in "abcd" for mode in ("hints", "hints-avoid")},
    **{(s, "hints-avoid", True): (0.0, 0.05) for s in "abcd"},
    **{(s, "extender", workload): (0.0, 0.0) for s in "abcd" for workload in (False, True)},
}


def verdict(result: Result) -> str:
    goal = GOALS.get((result.scenario, result.mode, result.workload))
    if goal is None:
        return "-"
    met = result.stranded <= goal[0] * result.pods and result.denied_per_placed <= goal[1]
    if result.mode in HINT_MODES:
        met = met and result.over_rate == 0 and not result.writes_per_binding > 1.0
        if result.scenario == "d":
            met = met and result.placed_on_added > 0
    return "met" if met else "MISSED"


def row(result: Result) -> str:
    def seconds(value: float) -> str:
        return "-" if value != value else f"{value:.2f}"  # nan: nothing placed

    writes = "-"
    if result.mode in HINT_MODES:
        writes = (
            f"{result.node_writes} ({result.writes_per_binding:.2f}/binding, {result.deferred} deferred, "
            f"{result.over_rate} over rate; at the end {result.queued_at_end} queued, stalest "
            f"{seconds(result.stalest_at_end_s)} s)"
        )
    added = "-"
    if result.scenario == "d" and result.mode not in HINT_MODES:
        added = f"{result.placed_on_added} pods"
    elif result.scenario == "d":
        added = (
            f"{result.placed_on_added} pods; labelled p50 {seconds(result.added_labelled_p50_s)} s, "
            f"p99 {seconds(result.added_labelled_p99_s)} s"
        )
    return (
        f"| ({result.scenario}){' workload' if result.workload else ''} | {described(result)} | {result.placed}/{result.pods} | "
        f"{result.stranded} | {result.denied} | {result.denied_per_placed:.3f} | {seconds(result.p50_s)} | "
        f"{seconds(result.p99_s)} | {result.hinted} | {writes} | {added} | {result.seconds:.0f} | {verdict(result)} |"
    )


def described(result: Result) -> str:
    """The mode, and with a replica set where kube-scheduler's extender calls went."""
    if result.replicas == 1:
        return result.mode
    via = f", extender via the {result.extender_via}" if result.mode == "extender" else ""
    return f"{result.mode} ({result.replicas} replicas{via}, {result.relayed} calls relayed)"


def summary(results: list[Result], delays: ApiDelays) -> list[str]:
    """Per scenario and mode, the median of the runs (seeds) with their spread."""
    groups: dict[tuple[str, bool, str, int, str], list[Result]] = {}
    for result in results:
        key = (result.scenario, result.workload, result.mode, result.replicas, result.extender_via)
        groups.setdefault(key, []).append(result)
    lines = []
    for runs in groups.values():
        first = runs[0]
        lines += [
            "",
            f"({first.scenario}){' workload' if first.workload else ''} {described(first).split(' (')[0]}"
            + (
                f", {first.replicas} replicas, extender via the {first.extender_via}"
                if first.replicas > 1
                else ""
            )
            + f"; apiserver {delays.to_webhook_s * 1000:g} ms to the webhook, {delays.to_watch_s * 1000:g} ms"
            + f" to the watch; seeds {', '.join(str(r.seed) for r in runs)}",
            "",
            "| " + " | ".join(HEADER) + " |",
            "|" + "---|" * len(HEADER),
            median_row("placed", [r.placed for r in runs]),
            median_row("stranded", [r.stranded for r in runs]),
            median_row("denied bindings", [r.denied for r in runs]),
            median_row("denied bindings per placed pod", [r.denied_per_placed for r in runs], 3),
            median_row("placement p50 s", [r.p50_s for r in runs], 2),
            median_row("placement p99 s", [r.p99_s for r in runs], 2),
            median_row("extender calls relayed from the leader", [r.relayed for r in runs]),
        ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(DOC or "").splitlines()[0])
    parser.add_argument("--scenarios", default="a,b,c,d", help="comma-separated: a, b, c, d, e")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES))
    parser.add_argument("--seed", type=int, default=1, help="tie-breaking in selectHost")
    parser.add_argument(
        "--runs", type=int, default=1, help="runs of each, seeds SEED, SEED+1, ...; then their medians"
    )
    parser.add_argument(
        "--replicas", type=int, choices=(1, 2), default=1, help="limitguard replicas (2: a replica set)"
    )
    parser.add_argument(
        "--extender-via",
        choices=("leader", "follower"),
        default="leader",
        help="with 2 replicas: the one kube-scheduler's extender connection reached",
    )
    parser.add_argument(
        "--settle", type=float, default=30.0, help="seconds without a placement before pending pods count"
    )
    parser.add_argument("--port", type=int, default=18470)
    parser.add_argument(
        "--workload",
        action="store_true",
        help="the pods belong to one ReplicaSet (kube-scheduler's default spreading then applies)",
    )
    parser.add_argument(
        "--max-per-second", type=float, default=5.0, help="limitguard's clusterWrites.maxPerSecond"
    )
    parser.add_argument("--burst", type=int, default=10, help="limitguard's clusterWrites.burst")
    parser.add_argument(
        "--webhook-ms",
        type=float,
        default=0.0,
        help="the apiserver's time from a binding call to limitguard's webhook (its admission chain)",
    )
    parser.add_argument(
        "--persist-ms",
        type=float,
        default=0.0,
        help="the apiserver's time from the webhook's answer to the binding on every watch",
    )
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    modes = [mode for mode in args.modes.split(",") if mode]
    if not supports_hints():
        print("hints modes skipped: this limitguard has no placementHints setting", file=sys.stderr)
        modes = [mode for mode in modes if mode not in HINT_MODES]
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; python -m bench.placement {' '.join(sys.argv[1:])}"
    )
    print(
        "| scenario | mode | placed | stranded | denied bindings | denied per placed | "
        "placement p50 s | p99 s | hinted | node writes | added nodes | run s | goal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for name in args.scenarios.split(","):
        for mode in modes:
            for seed in range(args.seed, args.seed + args.runs):
                scenario = owned(SCENARIOS[name]()) if args.workload else SCENARIOS[name]()
                result = asyncio.run(
                    run_one(
                        scenario,
                        mode,
                        seed,
                        args.settle,
                        args.port,
                        args.max_per_second,
                        args.burst,
                        args.replicas,
                        args.extender_via,
                        ApiDelays(args.webhook_ms / 1000, args.persist_ms / 1000),
                    )
                )
                results.append(result)
                print(row(result), flush=True)
                if result.unchecked or result.unschedulable:
                    print(
                        f"  ({result.unchecked} bindings unchecked, {result.unschedulable} unschedulable attempts)"
                    )
    if args.runs > 1:
        print("\n".join(summary(results, ApiDelays(args.webhook_ms / 1000, args.persist_ms / 1000))))
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "wb") as out:
            out.write(
                orjson.dumps(
                    [
                        {
                            **vars(r),
                            "denied_per_placed": r.denied_per_placed,
                            "writes_per_binding": r.writes_per_binding,
                        }
                        for r in results
                    ]
                )
            )


if __name__ == "__main__":
    main()
