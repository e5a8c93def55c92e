"""bench.goals: issue 16's thresholds applied to one make-bench run's figures (run 7's, 2026-11-23)."""

from __future__ import annotations

from typing import Any

from bench.goals import goals, print_goals


def _scenario(ratio: float, p99: float, floor_p99: float) -> dict[str, float]:
    return {"ratio": ratio, "p99_ms": p99, "floor_p99_ms": floor_p99}


def _result(nodes: int, binding: tuple, mutate: tuple, unbound: tuple, beside: tuple) -> dict[str, Any]:
    names = min(nodes, 5000)
    return {
        "nodes": nodes,
        "load": {"state_seconds": 2.63, "state_rss_mb": 96.0},
        "scenarios": {
            "binding that fits": _scenario(*binding),
            "unbound pod, no room (full scan)": _scenario(*unbound),
            "mutate a best-effort pod": _scenario(*mutate),
            f"extender prioritize, {names} names": _scenario(0.35, 73.7, 17.2),
            f"extender filter, {names} names": _scenario(0.50, 29.8, 13.4),
        },
        "beside": {"binding_p99_ms": beside[0], "alone_p99_ms": beside[1]},
    }


RUN_7_500 = _result(500, (0.87, 4.10, 3.23), (0.97, 3.96, 3.18), (0.68, 5.29, 3.21), (5.76, 4.93))
RUN_7_5000 = _result(5000, (1.07, 5.77, 4.16), (0.84, 7.04, 6.25), (0.72, 8.09, 6.33), (9.49, 6.26))


def test_run_7_at_500_nodes_meets_every_goal_it_can_show() -> None:
    found = goals(RUN_7_500)
    assert all(goal.met for goal in found)
    assert not any(goal.name.startswith("state load") for goal in found)  # a 5,000-node goal


def test_run_7_at_5000_nodes_misses_the_mutate_ratio_and_two_p99_ceilings() -> None:
    missed = {goal.name: goal.value for goal in goals(RUN_7_5000) if not goal.met}
    assert missed == {
        "binding p99 <= 5 ms (the floor's)": "5.8 (4.2)",
        "mutate >= 85% of the floor": "84%",
        "mutate p99 <= 5 ms (the floor's)": "7.0 (6.2)",
    }
    load = next(goal for goal in goals(RUN_7_5000) if goal.name.startswith("state load"))
    assert (load.value, load.met) == ("2.63 s, 96 MB", True)


def test_thresholds_are_inclusive() -> None:
    edge = _result(500, (0.85, 5.0, 1.0), (0.85, 5.0, 1.0), (0.50, 10.0, 1.0), (9.0, 4.0))
    assert all(goal.met for goal in goals(edge))
    past = _result(500, (0.849, 5.01, 1.0), (0.85, 5.0, 1.0), (0.499, 10.01, 1.0), (9.01, 4.0))
    assert sorted(goal.name for goal in goals(past) if not goal.met) == [
        "binding >= 85% of the floor",
        "binding p99 <= 5 ms (the floor's)",
        "prioritize beside adds <= 5 ms",
        "unbound, no room >= 50% of the floor",
        "unbound, no room p99 <= 10 ms (the floor's)",
    ]


def test_the_table_has_a_cell_per_size(capsys) -> None:
    print_goals([RUN_7_500, RUN_7_5000])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["goals", "(issue", "16)", "500", "nodes", "5,000", "nodes"]
    load = next(line for line in lines if line.strip().startswith("state load"))
    assert load.split()[-6:] == ["-", "2.63", "s,", "96", "MB", "ok"]  # no figure at 500 nodes
    mutate = next(line for line in lines if line.strip().startswith("mutate >="))
    assert mutate.split()[-4:] == ["97%", "ok", "84%", "MISSED"]
