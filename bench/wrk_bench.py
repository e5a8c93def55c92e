"""wrk benchmark: limitguard against a bare aiohttp + orjson floor on the same TLS certificate.

For each cluster size (default 500, 5,000 and 15,000 nodes, 30 pods a node) this builds a
synthetic cluster, starts `limitguard serve` (default settings: log level info, event loop auto)
and the floor (bench/floor_server.py: aiohttp on asyncio's own loop, the issue's floor), and drives
them with `wrk -t1 -c16` posting real AdmissionReview and ExtenderArgs bodies (bench/wrk/post.lua).
Per scenario it prints requests/s, the ratio to the floor, and wrk's p50/p99. Where `serve` runs on
uvloop, a second floor runs on uvloop too: the ratio to it is the policy's own share, apart from
what the faster loop gives both. It also measures the state load (time, peak RSS) and, in a separate
process, the policy cost without HTTP: the node table next to the reference oracle (limitguard.testing.reference).

    python -m bench.wrk_bench                         # all sizes, 3 x 5 s per side and scenario
    python -m bench.wrk_bench --sizes 5000 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from bench.admission import CONFIG as ADMISSION_CONFIG
from bench.admission import binding_body, pod_body
from bench.extender import EXTENDER_CONFIG
from bench.extender import pod as extender_pod
from bench.goals import Round, goals, print_goals
from bench.harness import free_ports, peak_rss_mb, start, start_floor, stop
from bench.state_load import measure_state_load
from bench.synthetic import write_cluster
from bench.wrk_runner import Run, handler_totals, median_run, wrk, wrk_beside
from limitguard.certs import generate as certs
from limitguard.http.eventloop import loop_factory

REPO = Path(__file__).resolve().parents[1]
PODS_PER_NODE = 30
EXTENDER_NAMES = 5000
# limitguard's bench configuration with every scorer the extender bench counts: the heaviest prioritize.
CONFIG = ADMISSION_CONFIG + "extender: " + orjson.dumps(EXTENDER_CONFIG).decode() + "\n"


def write_lines(path: Path, bodies: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(bodies) + b"\n")
    return path


def extender_body(names: list[str]) -> bytes:
    """Go-encoded ExtenderArgs of a nodeCacheCapable extender for *names*."""
    return orjson.dumps({"Pod": extender_pod("2"), "Nodes": None, "NodeNames": names})


IN_PROCESS = """
import sys, time
from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.kube.filefeed import load_cluster_file
from limitguard.state.store import ClusterState
from limitguard.cli.configfile import load_config
from limitguard.extender.protocol import decode_extender_args
from limitguard.extender.service import Extender
from limitguard.extender.config import ExtenderConfig
from limitguard.testing.reference import ReferenceExtender, ReferenceValidator

cluster, config_file, scan_file, extender_file = sys.argv[1:5]
state = ClusterState()
load_cluster_file(state, cluster)
config = load_config(config_file)
scan = decode_review(open(scan_file, "rb").readline())
args = decode_extender_args(open(extender_file, "rb").readline())

def timed(call, count):
    call()
    started = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - started) / count * 1000

for columnar in (True, False):
    validator = (Validator if columnar else ReferenceValidator)(state, config)
    extender = (Extender if columnar else ReferenceExtender)(state, config, ExtenderConfig(config.scorers))
    count = 200 if columnar else 10
    print(
        "columnar" if columnar else "reference",
        timed(lambda: validator(scan), count),
        timed(lambda: extender.prioritize(args), count // 4 + 1),
        timed(lambda: extender.filter(args), count // 4 + 1),
    )
"""


def in_process(cluster: Path, config: Path, scan: Path, extender: Path) -> dict[str, list[float]]:
    out = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, str(cluster), str(config), str(scan), str(extender)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    return {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out.splitlines()}


@dataclass(frozen=True)
class Workload:
    """One cluster size's files: the cluster List, the serve configuration, the request bodies."""

    nodes: int
    pods: int
    cluster: Path
    config: Path
    bodies: dict[str, Path]  # scenario key -> a file of request bodies, one a line (bench/wrk/post.lua)


def prepare(nodes: int, work: Path) -> Workload:
    """The synthetic cluster of *nodes* nodes (30 pods each) and the bodies of every scenario."""
    rng = random.Random(11)
    pods = nodes * PODS_PER_NODE
    pending = min(10_000, pods // 10)
    cluster_file = work / f"cluster-{nodes}.json"
    pending_pods = write_cluster(cluster_file, nodes, pods, pending)
    node_names = [f"node-{index:05d}" for index in range(nodes)]
    bodies = {
        "binding": write_lines(
            work / "binding.jsonl",
            [
                binding_body(
                    i,
                    pending_pods[i % len(pending_pods)]["name"],
                    pending_pods[i % len(pending_pods)]["namespace"],
                    rng.choice(node_names),
                )
                for i in range(len(pending_pods))
            ],
        ),
        # cpu 20 exceeds every node's remaining limit capacity (16 x 150% = 24, ~17 allocated):
        # every node is eligible and checked (no nodeSelector), none fits.
        "unbound": write_lines(
            work / "unbound.jsonl", [pod_body(i, {"cpu": "20", "memory": "1Gi"}) for i in range(1000)]
        ),
        "mutate": write_lines(work / "mutate.jsonl", [pod_body(i, None) for i in range(1000)]),
        # cpu 8 fits about half the nodes (~8 of 24 cpu left on the average node): a placement hint,
        # Gt over the nodes' room labels (bench.synthetic writes them)
        "hinted": write_lines(
            work / "hinted.jsonl", [pod_body(i, {"cpu": "8", "memory": "1Gi"}) for i in range(1000)]
        ),
        "extender": write_lines(work / "extender.jsonl", [extender_body(node_names[:EXTENDER_NAMES])]),
    }
    config_file = work / "config.yaml"
    config_file.write_text(CONFIG)
    return Workload(nodes, pods, cluster_file, config_file, bodies)


@contextmanager
def bench_workdir(prefix: str, tool: str) -> Iterator[tuple[Path, ssl.SSLContext]]:
    """A scratch folder with a fresh serving certificate, and a client context trusting its CA; wrk
    must be installed (*tool* names the make target that installs it). Removed afterwards."""
    if shutil.which("wrk") is None:
        sys.exit(f"wrk is not installed (Debian: apt-get install -y wrk); `{tool}` installs it")
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        certs.write(certs.generate(["localhost", "127.0.0.1"]), work / "certs")
        yield work, ssl.create_default_context(cafile=str(work / "certs" / certs.CA_CERT))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def serve_workload(
    workload: Workload, work: Path, port: int, context: ssl.SSLContext, *options: str, **start_options: Any
) -> subprocess.Popen:
    """`limitguard serve` over *workload*'s cluster with default settings (log level info), plus *options*."""
    command = [
        *(sys.executable, "-m", "limitguard", "serve", "--config", str(workload.config)),
        *("--cluster", str(workload.cluster), "--cert-dir", str(work / "certs")),
        *("--host", "127.0.0.1", "--port", str(port), *options),
    ]
    # loading 450,000 pods takes a while on a loaded machine
    return start(command, f"https://localhost:{port}/readyz", context, **{"timeout": 600, **start_options})


def bench_size(nodes: int, seconds: int, rounds: int, work: Path, context: ssl.SSLContext) -> dict:
    workload = prepare(nodes, work)
    pods, bodies, cluster_file = workload.pods, workload.bodies, workload.cluster
    pending = min(10_000, pods // 10)
    load = measure_state_load(cluster_file)
    print(
        f"\n== {nodes} nodes, {pods} pods ({pending} pending): state load {load['state_seconds']:.2f} s, "
        f"peak RSS {load['state_rss_mb']:.0f} MB (orjson parse alone: {load['parse_seconds']:.2f} s, "
        f"{load['parse_rss_mb']:.0f} MB)",
        flush=True,
    )
    figures = in_process(cluster_file, workload.config, bodies["unbound"], bodies["extender"])
    port, floor_port, same_loop_port = free_ports(3)
    log_file = (work / "server.log").open("wb")
    server = serve_workload(workload, work, port, context, log_file=log_file)
    floor = start_floor(work / "certs", floor_port, context)
    serving_loop, _ = loop_factory("auto")  # the loop `serve` picks with default settings
    same_loop_floor = None
    if serving_loop != "asyncio":
        same_loop_floor = start_floor(work / "certs", same_loop_port, context, serving_loop)
    scenarios = [
        # first, as before: the defaulted pod gets its placement hint (a Gt term, whatever the nodes)
        ("mutate a best-effort pod", "/mutate", "mutate"),
        ("binding that fits", "/validate", "binding"),
        ("unbound pod, no room", "/validate", "unbound"),
        ("mutate, placement hint", "/mutate", "hinted"),
        (f"extender prioritize, {min(nodes, EXTENDER_NAMES)} names", "/extender/prioritize", "extender"),
        (f"extender filter, {min(nodes, EXTENDER_NAMES)} names", "/extender/filter", "extender"),
    ]
    rows = []
    round_figures: dict[str, list[dict]] = {}  # each round: limitguard's run and the floor's after it
    answer_floors: dict[str, Run] = {}  # extender floors that also answer every candidate
    try:
        for name, path, key in scenarios:
            # Alternate limitguard and floor runs and keep the median of each: the machine is shared,
            # and its load drifts within seconds.
            ours_runs, base_runs, same_loop_runs = [], [], []
            before = handler_totals(port, context, path)
            for _ in range(rounds):
                ours_runs.append(wrk(f"https://localhost:{port}{path}", bodies[key], seconds))
                base_runs.append(wrk(f"https://localhost:{floor_port}{path}", bodies[key], seconds))
                if same_loop_floor is not None:
                    same_loop_runs.append(
                        wrk(f"https://localhost:{same_loop_port}{path}", bodies[key], seconds)
                    )
            after = handler_totals(port, context, path)
            handler_ms = (after[0] - before[0]) / max(after[1] - before[1], 1) * 1000
            # each round's ratio, limitguard against the floor run right after it: the drift's size
            spread = sorted(ours.rps / base.rps for ours, base in zip(ours_runs, base_runs, strict=True))
            round_figures[name] = [
                asdict(Round(ours.rps, base.rps, ours.p99_ms, base.p99_ms, ours.errors))
                for ours, base in zip(ours_runs, base_runs, strict=True)
            ]
            same_loop = median_run(same_loop_runs) if same_loop_runs else None
            rows.append((name, median_run(ours_runs), median_run(base_runs), handler_ms, spread, same_loop))
            if path.startswith("/extender/"):
                answer_path = path.replace("/extender/", "/extender-answer/")
                answering = [
                    wrk(f"https://localhost:{floor_port}{answer_path}", bodies[key], seconds)
                    for _ in range(rounds)
                ]
                answer_floors[name] = median_run(answering)
        alone_runs, beside_runs, side_runs = [], [], []
        for _ in range(rounds):
            alone_runs.append(wrk(f"https://localhost:{port}/validate", bodies["binding"], seconds))
            beside, side = wrk_beside(
                (f"https://localhost:{port}/validate", bodies["binding"]),
                (f"https://localhost:{port}/extender/prioritize", bodies["extender"]),
                seconds,
            )
            beside_runs.append(beside)
            side_runs.append(side)
        beside, side = median_run(beside_runs), median_run(side_runs)
        rss = peak_rss_mb(server.pid)
    finally:
        stop(server, floor, same_loop_floor)
        log_file.close()
    print(f"limitguard serves on {serving_loop}; floor: aiohttp on asyncio's loop")
    print(
        f"{'scenario':<40} {'limitguard':>11} {'floor':>9} {'ratio':>6} {'rounds':>9} {'p50 ms':>7} "
        f"{'p99 ms':>7} {'floor p99':>9} {'handler ms':>10} {'errors':>6} {serving_loop + ' floor':>13} {'ratio':>6}"
    )
    for name, ours, base, handler_ms, spread, same_loop in rows:
        rounds_range = f"{spread[0]:.0%}-{spread[-1]:.0%}"
        same_loop_text = f"{same_loop.rps:>13,.0f} {ours.rps / same_loop.rps:>6.0%}" if same_loop else ""
        print(
            f"{name:<40} {ours.rps:>11,.0f} {base.rps:>9,.0f} {ours.rps / base.rps:>6.0%} {rounds_range:>9} "
            f"{ours.p50_ms:>7.2f} {ours.p99_ms:>7.2f} {base.p99_ms:>9.2f} {handler_ms:>10.3f} {ours.errors:>6} "
            + same_loop_text
        )
    print("  (ratio: of the medians; rounds: the lowest and highest ratio of one limitguard run to the")
    print("   floor run right after it; handler ms: the server's own mean time per request, from its")
    print(f"   duration histogram; {serving_loop} floor: the same bare handler on limitguard's loop)")
    for name, floor_answering in answer_floors.items():
        ours = next(row[1] for row in rows if row[0] == name)
        print(
            f"  {name}: floor that also answers every candidate {floor_answering.rps:,.0f} req/s "
            f"(p99 {floor_answering.p99_ms:.2f} ms): limitguard at {ours.rps / floor_answering.rps:.0%} of it"
        )
    alone_p99 = statistics.median(run.p99_ms for run in alone_runs)
    beside_p99 = statistics.median(run.p99_ms for run in beside_runs)
    print(
        f"binding beside a 1-connection prioritize loop: {beside.rps:,.0f} req/s, median p99 {beside_p99:.2f} ms "
        f"(alone {alone_p99:.2f} ms: {beside_p99 - alone_p99:+.2f} ms); prioritize {side.rps:,.0f} req/s, "
        f"p99 {side.p99_ms:.2f} ms"
    )
    print(f"server peak RSS after the run: {rss:.0f} MB")
    print("in process (no HTTP), ms per call:           unbound no-room   prioritize   filter")
    for path_name, (scan_ms, prioritize_ms, filter_ms) in figures.items():
        print(f"  {path_name:<42} {scan_ms:>10.3f} {prioritize_ms:>12.3f} {filter_ms:>8.3f}")
    return {
        "nodes": nodes,
        "pods": pods,
        "load": load,
        "server_rss_mb": rss,
        "scenarios": {
            name: {
                "rps": ours.rps,
                "floor_rps": base.rps,
                "ratio": ours.rps / base.rps,
                "round_ratios": spread,
                "rounds": round_figures[name],
                "p50_ms": ours.p50_ms,
                "p99_ms": ours.p99_ms,
                "floor_p99_ms": base.p99_ms,
                "handler_ms": handler_ms,
                "errors": ours.errors,
                "same_loop_floor_rps": same_loop.rps if same_loop else None,
                "same_loop_ratio": ours.rps / same_loop.rps if same_loop else None,
            }
            for name, ours, base, handler_ms, spread, same_loop in rows
        },
        "event_loop": serving_loop,
        "answering_floors": {name: run.rps for name, run in answer_floors.items()},
        "beside": {"binding_p99_ms": beside_p99, "alone_p99_ms": alone_p99, "prioritize_rps": side.rps},
        "in_process_ms": figures,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="500,5000,15000", help="node counts, comma-separated")
    parser.add_argument("--seconds", type=int, default=5, help="duration of each wrk run")
    parser.add_argument(
        "--rounds", type=int, default=3, help="alternating runs per side; the median is shown"
    )
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    with bench_workdir("limitguard-wrk-", "make bench") as (work, context):
        print(
            f"wrk -t1 -c16, keep-alive HTTPS (TLS 1.3), {args.rounds} alternating runs of {args.seconds} s per side "
            "(median shown); client and servers share this machine"
        )
        results = [
            bench_size(int(size), args.seconds, args.rounds, work, context) for size in args.sizes.split(",")
        ]
        print_goals({f"{result['nodes']:,} nodes": goals(result) for result in results})
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
