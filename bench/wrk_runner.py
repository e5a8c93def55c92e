"""Running wrk and the servers for bench/wrk_bench.py: one wrk run, two at once, the server's own
handler time from its metrics, and a server start with its log in a file."""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "bench" / "wrk" / "post.lua"


@dataclass
class Run:
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def _command(url: str, bodies: Path, seconds: int, connections: int) -> list[str]:
    return [
        *("wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s"),
        *("-s", str(SCRIPT), url, "--", str(bodies)),
    ]


def _parse(out: str) -> Run:
    """A run's figures, from the script's done() line."""
    line = next(line for line in out.splitlines() if line.startswith("WRK-JSON "))
    figures = json.loads(line.removeprefix("WRK-JSON "))
    return Run(
        figures["requests"],
        figures["duration_us"] / 1e6,
        figures["p50_us"] / 1000,
        figures["p99_us"] / 1000,
        figures["socket_errors"] + figures["non2xx"],
    )


def wrk(url: str, bodies: Path, seconds: int, connections: int = 16) -> Run:
    """One wrk run."""
    command = _command(url, bodies, seconds, connections)
    return _parse(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def wrk_beside(admissions: tuple[str, Path], prioritize: tuple[str, Path], seconds: int) -> tuple[Run, Run]:
    """Admissions at -c16 while one scheduler (-c1) calls prioritize: both wrk at once."""
    side = subprocess.Popen(_command(*prioritize, seconds, 1), stdout=subprocess.PIPE, text=True)
    main = subprocess.run(_command(*admissions, seconds, 16), capture_output=True, text=True, check=True)
    side_out, _ = side.communicate()
    return _parse(main.stdout), _parse(side_out)


HANDLER_SERIES = {
    "/validate": 'limitguard_admission_duration_seconds_{}{{webhook="validate"}}',
    "/mutate": 'limitguard_admission_duration_seconds_{}{{webhook="mutate"}}',
    "/extender/prioritize": 'limitguard_extender_duration_seconds_{}{{verb="prioritize"}}',
    "/extender/filter": 'limitguard_extender_duration_seconds_{}{{verb="filter"}}',
}


def handler_totals(port: int, context: ssl.SSLContext, path: str) -> tuple[float, float]:
    """(seconds, calls) the server's own duration histogram holds for *path*'s handler."""
    with urllib.request.urlopen(f"https://localhost:{port}/metrics", context=context) as response:
        text = response.read().decode()
    values = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    series = HANDLER_SERIES[path]
    return float(values.get(series.format("sum"), 0)), float(values.get(series.format("count"), 0))


def median_run(runs: list[Run]) -> Run:
    """The run with the median requests/s (its own p50/p99 with it)."""
    return sorted(runs, key=lambda run: run.rps)[len(runs) // 2]
