"""Issue 16's goals, checked against the figures of one `make bench` run (bench_size's results).

Each goal is a ratio to the floor measured side by side, an absolute p99 ceiling (printed with the
floor's own p99, which tells a slow machine from a slow limitguard), the p99 a prioritize loop adds
to bindings, or the state load of the 5,000-node cluster (150,000 pods).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BINDING, UNBOUND, MUTATE = "binding that fits", "unbound pod, no room (full scan)", "mutate a best-effort pod"
PRIORITIZE, FILTER = "extender prioritize", "extender filter"  # the scenario names go on with the count
LOAD_NODES, LOAD_SECONDS, LOAD_PEAK_MB = 5000, 3.0, 115  # "150,000 pods in about 3 s, 115 MB peak"
BESIDE_MS = 5.0


@dataclass(frozen=True)
class Goal:
    name: str
    value: str  # the figure, as printed
    met: bool


def _scenario(result: dict[str, Any], prefix: str) -> dict[str, Any]:
    return next(figures for name, figures in result["scenarios"].items() if name.startswith(prefix))


def goals(result: dict[str, Any]) -> list[Goal]:
    """The goals one cluster size can show (the state load only at 5,000 nodes)."""
    found = []
    for label, prefix, least, ceiling in (
        ("binding", BINDING, 0.85, 5.0),
        ("mutate", MUTATE, 0.85, 5.0),
        ("unbound, no room", UNBOUND, 0.50, 10.0),
    ):
        scenario = _scenario(result, prefix)
        found.append(
            Goal(
                f"{label} >= {least:.0%} of the floor", f"{scenario['ratio']:.0%}", scenario["ratio"] >= least
            )
        )
        found.append(
            Goal(
                f"{label} p99 <= {ceiling:g} ms (the floor's)",
                f"{scenario['p99_ms']:.1f} ({scenario['floor_p99_ms']:.1f})",
                scenario["p99_ms"] <= ceiling,
            )
        )
    for label, prefix in (("prioritize", PRIORITIZE), ("filter", FILTER)):
        ratio = _scenario(result, prefix)["ratio"]
        found.append(Goal(f"extender {label} >= 20% of the floor", f"{ratio:.0%}", ratio >= 0.20))
    beside = result["beside"]
    added = beside["binding_p99_ms"] - beside["alone_p99_ms"]
    found.append(Goal(f"prioritize beside adds <= {BESIDE_MS:g} ms", f"{added:+.2f} ms", added <= BESIDE_MS))
    if result["nodes"] == LOAD_NODES:
        load = result["load"]
        found.append(
            Goal(
                f"state load <= {LOAD_SECONDS:g} s, peak <= {LOAD_PEAK_MB} MB",
                f"{load['state_seconds']:.2f} s, {load['state_rss_mb']:.0f} MB",
                load["state_seconds"] <= LOAD_SECONDS and load["state_rss_mb"] <= LOAD_PEAK_MB,
            )
        )
    return found


def print_goals(results: list[dict[str, Any]]) -> None:
    """One line a goal, one cell a cluster size: the figure, then `ok` or `MISSED`."""
    sizes = {result["nodes"]: {goal.name: goal for goal in goals(result)} for result in results}
    names = list(dict.fromkeys(name for per_size in sizes.values() for name in per_size))
    print(f"\n{'goals (issue 16)':<46}" + "".join(f"{f'{nodes:,} nodes':>24}" for nodes in sizes))
    for name in names:
        cells = []
        for per_size in sizes.values():
            goal = per_size.get(name)
            cells.append(f"{goal.value} {'ok' if goal.met else 'MISSED'}" if goal else "-")
        print(f"  {name:<44}" + "".join(f"{cell:>24}" for cell in cells))
