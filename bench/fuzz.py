"""Fuzzing figures the reliability tests used to assert and no longer do (issue 11).

1. Memory of the admission server under repeated bad input, next to the same number of good
   requests (baseline), in one process: traced-memory growth (tracemalloc) over one round after a
   warm-up round, and RSS growth over several rounds.
2. `limitguard validate` against hostile files, each in a child process: seconds, peak RSS (VmHWM)
   and peak address space (VmPeak, the margin under the tests' 1 GiB RLIMIT_AS crash guard), next
   to a trivial valid file (baseline).

    python -m bench.fuzz
    python -m bench.fuzz --requests 500 --rounds 2     # quick
"""

from __future__ import annotations

import argparse
import copy
import gc
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import orjson
import yaml

from bench.harness import REPO
from limitguard.certs import generate as certs
from limitguard.testing.examples import config, worked_example
from limitguard.testing.hostile import (
    FIFTY_MEGABYTES_OF_STDIN,
    base_reviews,
    billion_laughs,
    mutate,
    paths,
    write_fifty_megabytes,
)
from limitguard.testing.threaded import Client, running


def fixture(name: str) -> object:
    """A file of tests/fixtures (data only: the benchmark imports nothing from the tests)."""
    text = (REPO / "tests" / "fixtures" / name).read_text()
    return orjson.loads(text) if name.endswith(".json") else yaml.safe_load(text)


BASES = base_reviews(fixture)

# The real command, reporting its own peak RSS and address space at exit (VmHWM/VmPeak of its own
# process, which ru_maxrss of a forked child does not isolate from the parent).
MEASURED_VALIDATE = (
    "import atexit, sys\n"
    "from pathlib import Path\n"
    "def report():\n"
    "    status = dict(l.split(':', 1) for l in Path('/proc/self/status').read_text().splitlines() if ':' in l)\n"
    "    sys.stderr.write('\\nVM ' + status['VmHWM'].split()[0] + ' ' + status['VmPeak'].split()[0] + '\\n')\n"
    "atexit.register(report)\n"
    "from limitguard.cli.main import main\n"
    "sys.exit(main(['validate', *sys.argv[1:]]))\n"
)


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def good_bodies(count: int) -> list[bytes]:
    """Unmodified fixture reviews: what the server normally sees."""
    return [orjson.dumps(BASES[index % len(BASES)]) for index in range(count)]


def bad_bodies(count: int, seed: int = 5) -> list[bytes]:
    """The reviews the memory test used: one field replaced by a wrong type or junk."""
    rng = random.Random(seed)
    bodies = []
    for _ in range(count):
        document = copy.deepcopy(rng.choice(BASES))
        path = rng.choice(paths(document))
        junk = rng.choice([None, 7, "junk", [], {"a": 1}])
        bodies.append(orjson.dumps(mutate(document, path, "replace", junk)))
    return bodies


def memory_growth(client: Client, bodies: list[bytes], rounds: int) -> tuple[int, int]:
    """(traced bytes grown over one round after warm-up, RSS KiB grown over *rounds* more rounds)."""
    endpoints = ["/validate", "/mutate"]

    def round_trip() -> None:
        for index, body in enumerate(bodies):
            client.post(endpoints[index % 2], body)

    round_trip()  # warm-up: bounded caches fill, connections open
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    round_trip()
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    gc.collect()
    rss_before = rss_kib()
    for _ in range(rounds):
        round_trip()
    gc.collect()
    return traced, rss_kib() - rss_before


def admission_memory(requests: int, rounds: int) -> None:
    print(f"admission server memory, {requests} requests per round (validate/mutate alternating)")
    print(f"  {'input':<22} {'traced growth, 1 round':>24} {f'RSS growth, {rounds} rounds':>22}")
    with tempfile.TemporaryDirectory() as directory:
        cert_dir = Path(directory)
        certs.write(certs.generate(["localhost", "127.0.0.1"]), cert_dir)
        with running(cert_dir, worked_example(), config(), max_body_bytes=64 * 1024) as server:
            for name, bodies in (
                ("good (baseline)", good_bodies(requests)),
                ("bad (fuzz)", bad_bodies(requests)),
            ):
                traced, rss = memory_growth(Client(server), bodies, rounds)
                print(f"  {name:<22} {traced:>18,} bytes {rss:>16,} KiB", flush=True)


def run_validate(arguments: list[str], stdin: bytes = b"") -> tuple[int, float, int, int]:
    """Exit code, seconds, peak RSS MiB, peak address space MiB of one `limitguard validate`."""
    started = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-c", MEASURED_VALIDATE, *arguments],
        input=stdin,
        capture_output=True,
        cwd=REPO,
        check=False,
    )
    seconds = time.monotonic() - started
    _, _, figures = completed.stderr.decode(errors="replace").rpartition("\nVM ")
    hwm, peak = (int(value) // 1024 for value in figures.split())
    return completed.returncode, seconds, hwm, peak


def validate_cases(directory: Path) -> list[tuple[str, Callable[[], tuple[int, float, int, int]]]]:
    trivial = directory / "trivial.yaml"
    trivial.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    bomb = directory / "bomb.yaml"
    bomb.write_text(billion_laughs())
    huge = directory / "huge.yaml"
    write_fifty_megabytes(huge)
    return [
        ("trivial file (baseline)", lambda: run_validate([str(trivial)])),
        ("billion laughs", lambda: run_validate([str(bomb)])),
        ("50 MB file", lambda: run_validate([str(huge)])),
        ("50 MB on stdin", lambda: run_validate(["-"], FIFTY_MEGABYTES_OF_STDIN)),
    ]


def validate_children() -> None:
    print(
        "\n`limitguard validate` child process per input (no RLIMIT_AS here: the figures are what it needs)"
    )
    print(f"  {'input':<24} {'exit':>4} {'seconds':>8} {'peak RSS':>10} {'peak VM':>10}")
    with tempfile.TemporaryDirectory() as directory:
        for name, case in validate_cases(Path(directory)):
            code, seconds, hwm, peak = case()
            print(f"  {name:<24} {code:>4} {seconds:>8.2f} {hwm:>6} MiB {peak:>6} MiB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=1500, help="requests per round (default 1500)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds measured by RSS (default 3)")
    args = parser.parse_args()
    admission_memory(args.requests, args.rounds)
    validate_children()


if __name__ == "__main__":
    main()
