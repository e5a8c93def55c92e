"""Measured figures as the docs print them: each figure's median over its runs, the spread of the
runs and how many there were, under one header, after the command that produced them.

A bench prints `median_table(...)` and the block goes into the docs as it is; the test
`tests/unit/bench/test_docs_tables.py` holds every table the docs mark with `<!-- bench: ... -->`
to this shape, so a later run's rows stay comparable with the ones printed before."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

HEADER = ("figure", "median", "spread (min-max)", "runs")
MARKER = "<!-- bench: {command} -->"


def _number(value: float, digits: int) -> str:
    return f"{value:,.{digits}f}"


def median_row(figure: str, runs: Sequence[float], digits: int = 0) -> str:
    """`| figure | median | min-max | n |`; a single run has no spread (`-`)."""
    if not runs:
        raise ValueError(f"{figure}: no runs")
    spread = f"{_number(min(runs), digits)}-{_number(max(runs), digits)}" if len(runs) > 1 else "-"
    return f"| {figure} | {_number(statistics.median(runs), digits)} | {spread} | {len(runs)} |"


def median_table(command: str, figures: Mapping[str, Sequence[float]], digits: int = 0) -> str:
    """The marked table of *figures* (figure -> one value a run), ready to paste into the docs."""
    lines = [
        MARKER.format(command=command),
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
        *(median_row(figure, runs, digits) for figure, runs in figures.items()),
    ]
    return "\n".join(lines)
