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
from bench.placement.live import supports_hints
from bench.placement.run import MODES, Result, run_one
from bench.placement.scenarios import SCENARIOS, owned

GOALS = {  # (scenario, mode): (stranded at most, as a fraction of the pods; denied per placed pod at most)
    **{(s, "hints"): (0.0, 0.05) for s in "ab"},
    ("c", "hints"): (0.01, 0.1),
    **{(s, "extender"): (0.0, 0.0) for s in "abc"},
}


def verdict(result: Result) -> str:
    goal = GOALS.get((result.scenario, result.mode))
    if goal is None:
        return "-"
    met = result.stranded <= goal[0] * result.pods and result.denied_per_placed <= goal[1]
    return "met" if met else "MISSED"


def row(result: Result) -> str:
    def seconds(value: float) -> str:
        return "-" if value != value else f"{value:.2f}"  # nan: nothing placed

    return (
        f"| ({result.scenario}) | {result.mode} | {result.placed}/{result.pods} | {result.stranded} | "
        f"{result.denied} | {result.denied_per_placed:.3f} | {seconds(result.p50_s)} | {seconds(result.p99_s)} | "
        f"{result.hinted} | {result.seconds:.0f} | {verdict(result)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(DOC or "").splitlines()[0])
    parser.add_argument("--scenarios", default="a,b,c", help="comma-separated: a, b, c")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES))
    parser.add_argument("--seed", type=int, default=1, help="tie-breaking in selectHost")
    parser.add_argument(
        "--settle", type=float, default=30.0, help="seconds without a placement before pending pods count"
    )
    parser.add_argument("--port", type=int, default=18470)
    parser.add_argument(
        "--workload",
        action="store_true",
        help="the pods belong to one ReplicaSet (kube-scheduler's default spreading then applies)",
    )
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    modes = [mode for mode in args.modes.split(",") if mode]
    if "hints" in modes and not supports_hints():
        print("hints mode skipped: this limitguard has no placementHints setting", file=sys.stderr)
        modes.remove("hints")
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
        f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; python -m bench.placement {' '.join(sys.argv[1:])}"
    )
    print(
        "| scenario | mode | placed | stranded | denied bindings | denied per placed | "
        "placement p50 s | p99 s | hinted | run s | goal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    results = []
    for name in args.scenarios.split(","):
        for mode in modes:
            scenario = owned(SCENARIOS[name]()) if args.workload else SCENARIOS[name]()
            result = asyncio.run(run_one(scenario, mode, args.seed, args.settle, args.port))
            results.append(result)
            print(row(result), flush=True)
            if result.unchecked or result.unschedulable:
                print(
                    f"  ({result.unchecked} bindings unchecked, {result.unschedulable} unschedulable attempts)"
                )
    print(f"load at the end {os.getloadavg()[0]:.1f}")
    if args.json:
        with open(args.json, "wb") as out:
            out.write(orjson.dumps([{**vars(r), "denied_per_placed": r.denied_per_placed} for r in results]))


if __name__ == "__main__":
    main()
