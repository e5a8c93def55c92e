"""System calls per request of `limitguard serve` under wrk load, counted by `strace -c -f`.

Unlike requests a second, the count of system calls a request makes does not move with the load of a
shared machine: it is the evidence that a change to the request path removed (or added) one. For
each scenario of bench/wrk_bench.py this starts wrk (-t1 -c16) against a running server, attaches
`strace -c -f` to it (every thread) for the run, and divides each call's count by the requests wrk
saw answered. strace slows the server many times over; the counts per request stay.

    python -m bench.syscalls --nodes 5000                       # event loop auto (uvloop)
    python -m bench.syscalls --nodes 5000 --event-loop asyncio
    python -m bench.syscalls --server-path /tmp/old              # another checkout's limitguard
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import free_port, stop
from bench.memory import extender_args
from bench.wrk_bench import prepare, serve_workload
from bench.wrk_runner import wrk
from limitguard.certs import generate as certs

SCENARIOS = {  # name: (path, body file key)
    "binding": ("/validate", "binding"),
    "unbound": ("/validate", "unbound"),
    "mutate": ("/mutate", "mutate"),
    "prioritize": ("/extender/prioritize", "extender"),
    "nodelist": ("/extender/filter", "nodelist"),  # 100 full Nodes, 1.4 MB: read one Node at a time
}
NODELIST_NODES = 100


def parse_summary(text: str) -> dict[str, int]:
    """`strace -c` table -> {syscall: calls} (the errors column ignored, the total row dropped)."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 5 or not fields[0][0].isdigit() or fields[-1] == "total":
            continue
        counts[fields[-1]] = int(fields[3])
    return counts


def traced(pid: int, url: str, bodies: Path, seconds: int, out: Path) -> tuple[dict[str, int], int]:
    """One wrk run with strace attached to *pid*: (calls by syscall, requests answered)."""
    tracer = subprocess.Popen(
        ["strace", "-c", "-f", "-q", "-p", str(pid), "-o", str(out)], stderr=subprocess.DEVNULL
    )
    time.sleep(1.0)  # strace attaches to every thread before the load starts
    run = wrk(url, bodies, seconds)
    tracer.send_signal(signal.SIGINT)
    tracer.wait(timeout=60)
    return parse_summary(out.read_text()), run.requests


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--event-loop", default="auto", choices=("auto", "uvloop", "asyncio"))
    parser.add_argument("--seconds", type=int, default=5, help="duration of each traced wrk run")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated")
    parser.add_argument("--server-path", help="serve limitguard from this folder (PYTHONPATH)")
    parser.add_argument("--min", type=float, default=0.01, help="show calls at least this often a request")
    args = parser.parse_args()
    for tool in ("wrk", "strace"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (Debian: apt-get install -y {tool})")
    work = Path(tempfile.mkdtemp(prefix="limitguard-syscalls-"))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": args.server_path} if args.server_path else None
    try:
        certs.write(certs.generate(["localhost", "127.0.0.1"]), work / "certs")
        context = ssl.create_default_context(cafile=str(work / "certs" / certs.CA_CERT))
        workload = prepare(args.nodes, work)
        workload.bodies["nodelist"] = work / "nodelist.jsonl"
        workload.bodies["nodelist"].write_bytes(extender_args(NODELIST_NODES) + b"\n")
        with (work / "server.log").open("wb") as log_file:
            try:
                server = serve_workload(
                    workload, work, port, context, "--event-loop", args.event_loop, env=env, log_file=log_file
                )
            except RuntimeError:
                sys.exit((work / "server.log").read_text()[-3000:])
            try:
                print(
                    f"{args.nodes} nodes, --event-loop {args.event_loop}, {args.server_path or 'this checkout'}"
                )
                for name in args.scenarios.split(","):
                    path, key = SCENARIOS[name]
                    url = f"https://localhost:{port}{path}"
                    wrk(url, workload.bodies[key], 1)  # warm: connections, caches, the node table
                    counts, requests = traced(
                        server.pid, url, workload.bodies[key], args.seconds, work / "strace"
                    )
                    per_request = {call: count / max(requests, 1) for call, count in counts.items()}
                    shown = sorted(
                        (item for item in per_request.items() if item[1] >= args.min), key=lambda x: -x[1]
                    )
                    print(
                        f"  {name:<11} {requests:>6} requests, {sum(per_request.values()):6.2f} calls/request: "
                        + ", ".join(f"{call} {count:.2f}" for call, count in shown)
                    )
            finally:
                stop(server)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
