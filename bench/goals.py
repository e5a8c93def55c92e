"""The performance goals, judged on figures measured against the floor in the same run.

Each goal is a ratio to the bare aiohttp floor (bench/floor_server.py) measured side by side, at
5,000 nodes with wrk -t1 -c16: requests a second, and the p99 latency. A scenario runs in
alternating rounds (limitguard, then the floor); the verdict is on the median of the rounds'
ratios, so one round the shared machine disturbed does not decide it. `make bench-check`
(bench/check.py) exits non-zero when a goal is missed; `make bench` prints the same goals for each
cluster size, with the prioritize loop's added p99 and the state load of 5,000 nodes.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# scenario: the least share of the floor's requests a second
LEAST_SHARE = {"binding": 0.85, "unbound": 0.60, "mutate": 0.90, "prioritize": 0.40}
P99_WITHIN = 1.5  # limitguard's p99 at most this many times the floor's
LOAD_NODES, LOAD_SECONDS, LOAD_PEAK_MB = 5000, 3.0, 115  # "150,000 pods in about 3 s, 115 MB peak"
BESIDE_MS = 5.0
# bench/wrk_bench.py's scenario names (the extender's go on with the count of names)
SCENARIO_NAMES = {
    "binding": "binding that fits",
    "unbound": "unbound pod, no room",
    "mutate": "mutate a best-effort pod",
    "prioritize": "extender prioritize",
}


@dataclass(frozen=True)
class Round:
    """One limitguard wrk run and the floor's run right after it."""

    rps: float
    floor_rps: float
    p99_ms: float
    floor_p99_ms: float
    errors: int = 0  # limitguard's socket errors and non-2xx answers


@dataclass(frozen=True)
class Goal:
    name: str
    value: str  # the figure, as printed
    met: bool


def _ratio(value: float, floor: float) -> float:
    return value / floor if floor else float("inf")


def medians(rounds: Sequence[Round]) -> tuple[float, float]:
    """The median of the rounds' shares of the floor's rate, and of their p99s as multiples of the floor's."""
    share = statistics.median(_ratio(run.rps, run.floor_rps) if run.floor_rps else 0.0 for run in rounds)
    p99 = statistics.median(_ratio(run.p99_ms, run.floor_p99_ms) for run in rounds)
    return share, p99


def judge(scenario: str, rounds: Sequence[Round]) -> list[Goal]:
    """The share and p99 goals of *scenario* (a LEAST_SHARE key) over its rounds."""
    least = LEAST_SHARE[scenario]
    share, p99 = medians(rounds)
    found = [
        Goal(f"{scenario} >= {least:.0%} of the floor", f"{share:.0%}", share >= least),
        Goal(f"{scenario} p99 <= {P99_WITHIN:g}x the floor's", f"{p99:.2f}x", p99 <= P99_WITHIN),
    ]
    errors = sum(run.errors for run in rounds)
    if errors:  # fast error answers are no throughput
        found.append(Goal(f"{scenario} answered without errors", f"{errors} errors", False))
    return found


def judge_all(rounds: Mapping[str, Sequence[Round]]) -> list[Goal]:
    """Every scenario's goals, in LEAST_SHARE's order; scenarios not measured are left out."""
    return [
        goal for scenario in LEAST_SHARE if scenario in rounds for goal in judge(scenario, rounds[scenario])
    ]


def _rounds_of(result: dict[str, Any]) -> dict[str, list[Round]]:
    found = {}
    for scenario, prefix in SCENARIO_NAMES.items():
        figures = next(value for name, value in result["scenarios"].items() if name.startswith(prefix))
        found[scenario] = [Round(**run) for run in figures["rounds"]]
    return found


def goals(result: dict[str, Any]) -> list[Goal]:
    """The goals one `make bench` cluster size shows (the state load only at 5,000 nodes)."""
    found = judge_all(_rounds_of(result))
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


def missed(columns: Mapping[str, Iterable[Goal]]) -> list[str]:
    """`column: goal (figure)` of every goal missed."""
    return [
        f"{column}: {goal.name} ({goal.value})"
        for column, found in columns.items()
        for goal in found
        if not goal.met
    ]


def print_goals(columns: Mapping[str, list[Goal]]) -> None:
    """One line a goal, one cell a column (a cluster size, a setup): the figure, then `ok` or `MISSED`."""
    cells = {column: {goal.name: goal for goal in found} for column, found in columns.items()}
    names = list(dict.fromkeys(name for per_column in cells.values() for name in per_column))
    print(f"\n{'goals (median of the rounds)':<46}" + "".join(f"{column:>24}" for column in cells))
    for name in names:
        row = []
        for per_column in cells.values():
            goal = per_column.get(name)
            row.append(f"{goal.value} {'ok' if goal.met else 'MISSED'}" if goal else "-")
        print(f"  {name:<44}" + "".join(f"{cell:>24}" for cell in row))
