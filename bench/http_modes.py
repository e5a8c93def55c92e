"""What each HTTP mode (limitguard.http.modes) does per request, counted in process, not timed.

For each mode this serves the worked example (limitguard.testing.examples) over TLS on 127.0.0.1 in
this process, sends REQUESTS dry-run bindings of pod5 to node1 one after another on one keep-alive
connection, and counts, per request, with a profiler hook: the Python function calls made in
aiohttp's and limitguard's modules, the calls of C functions from them, and the event-loop lookups
(`asyncio.get_event_loop`, a `getpid` each on CPython 3.11). The client's own calls are asyncio's
streams and are not counted. Counts do not move with the machine's load: three runs give the same
figures but for the odd timer or garbage collection.

    python -m bench.http_modes [--requests 2000] [--runs 3] [--event-loop asyncio|uvloop]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import orjson

from limitguard.certs import generate as certs
from limitguard.http.eventloop import loop_factory
from limitguard.http.modes import HTTP_MODES, HttpMode
from limitguard.testing.builders import binding
from limitguard.testing.examples import config, worked_example
from limitguard.testing.server import app_services, client_context, serving

COUNTED = ("/aiohttp/", "/limitguard/")
GUARD_SECONDS = 120.0


def request_bytes() -> bytes:
    body = orjson.dumps(binding("pod5", "node1", dry_run=True))
    head = b"POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


async def answer(reader: asyncio.StreamReader) -> None:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), GUARD_SECONDS)
    assert head.startswith(b"HTTP/1.1 200"), head
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    await reader.readexactly(length)


async def count(mode: HttpMode, cert_dir: Path, requests: int) -> dict[str, float]:
    """Per request in *mode*: Python calls, C calls and loop lookups from aiohttp's and limitguard's code."""
    counts: Counter[str] = Counter()
    lookups = (asyncio.get_event_loop,)

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        name = frame.f_code.co_filename
        if any(part in name for part in COUNTED):
            if event == "call":
                counts["python calls"] += 1
            elif event == "c_call":
                counts["C calls"] += 1
                if any(arg is lookup for lookup in lookups):
                    counts["loop lookups"] += 1

    async with serving(app_services(worked_example(), config(), http_mode=mode), cert_dir) as served:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", served.port, ssl=client_context(cert_dir), server_hostname="localhost"
        )
        one = request_bytes()
        for _ in range(50):  # warm: memos filled, the connection's first request past
            writer.write(one)
            await answer(reader)
        sys.setprofile(profile)
        try:
            for _ in range(requests):
                writer.write(one)
                await answer(reader)
        finally:
            sys.setprofile(None)
        writer.close()
    return {what: counts[what] / requests for what in ("python calls", "C calls", "loop lookups")}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--event-loop", default="asyncio", choices=("asyncio", "uvloop"))
    args = parser.parse_args()
    _, new_loop = loop_factory(args.event_loop)
    with tempfile.TemporaryDirectory() as work:
        cert_dir = Path(work)
        certs.write(certs.generate(["localhost", "127.0.0.1"]), cert_dir)
        for mode in HTTP_MODES.values():
            runs = []
            for _ in range(args.runs):
                with asyncio.Runner(loop_factory=new_loop) as runner:
                    runs.append(runner.run(count(mode, cert_dir, args.requests)))
            figures = ", ".join(
                f"{what} {statistics.median(run[what] for run in runs):.2f} "
                f"({min(run[what] for run in runs):.2f}-{max(run[what] for run in runs):.2f})"
                for what in runs[0]
            )
            print(f"{mode.name}: per request, median of {args.runs} runs (range): {figures}", flush=True)


if __name__ == "__main__":
    main()
