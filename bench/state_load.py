"""State load: time and memory of loading a synthetic cluster into the state, beside a baseline.

    flock /tmp/bench.lock .venv/bin/python -m bench.state_load              # 5,000 nodes, 150,000 pods
    flock /tmp/bench.lock .venv/bin/python -m bench.state_load --nodes 500 --pods 15000 --pending 1000

Every figure comes from a fresh process (`python -m bench.state_load --child MODE FILE`), so the
imports and the allocator start clean and the peak (VmHWM) is that load's own. Modes:

- parse: `orjson.loads` of the whole file and nothing else, the baseline: what any Python reader
  of the file pays (its peak is the parsed document, far above the state's);
- file: what `limitguard serve --cluster FILE` does (ClusterState, load_cluster_file);
- pages: what the live feed does, without HTTP: list pages of 500 objects decoded with orjson and
  applied through the live feed's own sinks (limitguard.kube.livefeed.state_sinks).

For each mode: seconds (wall and CPU), RSS after the imports, RSS after the load, and the peak.
Modes alternate over --rounds rounds; the medians are printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

# Only the standard library and orjson at module level: the children run this module, and whatever
# it imports would count in their memory (bench.harness brings aiohttp, bench.synthetic the builders).
REPO = Path(__file__).resolve().parents[1]
MODES = ("parse", "file", "pages")
PAGE_SIZE = 500  # the reflector's list page (ReflectorSettings.page_size)
KINDS = {"Namespace": "namespaces", "Node": "nodes", "Pod": "pods"}


def _status_mb(field: str) -> float:
    """A VmRSS / VmHWM figure of this process, in MB (VmHWM, not ru_maxrss: the latter also
    counts the image of a large parent forked before exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _child(mode: str, path: str) -> None:
    """Load *path* one way and print the figures as JSON (runs in a fresh process)."""
    if mode == "parse":
        after_imports = _status_mb("VmRSS")
        start, cpu = time.perf_counter(), time.process_time()
        document = orjson.loads(Path(path).read_bytes())
    elif mode == "file" or mode.startswith("pools:"):  # the imports serve needs: state and file feed
        from limitguard.kube.filefeed import load_cluster_file
        from limitguard.state.store import ClusterState

        # "pools:N": the same load with N node pools configured (bench.pools labels the nodes)
        pools = _bench_pools(int(mode.partition(":")[2])) if mode != "file" else ()
        after_imports = _status_mb("VmRSS")
        start, cpu = time.perf_counter(), time.process_time()
        document = ClusterState(node_pools=pools)
        load_cluster_file(document, path)
    else:  # the live feed's module brings aiohttp along
        from limitguard.kube.livefeed import state_sinks
        from limitguard.state.store import ClusterState

        after_imports = _status_mb("VmRSS")
        start, cpu = time.perf_counter(), time.process_time()
        document = ClusterState()
        _apply_pages(state_sinks(document), path)
    figures = {
        "seconds": time.perf_counter() - start,
        "cpu_seconds": time.process_time() - cpu,
        "imports_mb": after_imports,
        "loaded_mb": _status_mb("VmRSS"),
        "peak_mb": _status_mb("VmHWM"),
    }
    del document
    print(json.dumps(figures))


def _bench_pools(count: int) -> tuple[Any, ...]:
    from bench.poolconfig import node_pools

    return node_pools(count)


def _apply_pages(sinks: dict[str, Any], path: str) -> None:
    """A reflector's list, page by page, as list_and_replace applies it (without the HTTP)."""
    stale = {kind: set(sink.held_keys()) for kind, sink in sinks.items()}  # empty: a first list
    with open(path, "rb") as pages:
        for line in pages:
            page = orjson.loads(line)
            kind, sink = page["kind"], sinks[page["kind"]]
            for obj in page["items"]:
                stale[kind].discard(sink.upsert(obj))
            sink.page_applied()
            del page
    for kind, sink in sinks.items():
        for key in sorted(stale[kind]):
            sink.remove(key)
        sink.mark_synced(True)


def measure(mode: str, path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.state_load", "--child", mode, str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    return json.loads(out.splitlines()[-1])


def measure_state_load(cluster_file: Path) -> dict[str, float]:
    """Load time and peak RSS of the state in a fresh process, and of bare orjson parsing (baseline)."""
    parse, state = measure("parse", cluster_file), measure("file", cluster_file)
    return {
        "parse_seconds": parse["seconds"],
        "parse_rss_mb": parse["peak_mb"],
        "state_seconds": state["seconds"],
        "state_rss_mb": state["peak_mb"],
    }


def write_files(work: Path, nodes: int, pods: int, pending: int) -> tuple[Path, Path]:
    """The synthetic cluster as one JSON List (the file feed) and as list pages, one a line."""
    from bench.synthetic import make_cluster

    items = make_cluster(nodes, pods, pending)["items"]
    cluster_file, pages_file = work / "cluster.json", work / "pages.jsonl"
    cluster_file.write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    with pages_file.open("wb") as out:
        for kind, plural in KINDS.items():
            objects = [item for item in items if item["kind"] == kind]
            for first in range(0, len(objects), PAGE_SIZE):
                page = {"kind": plural, "items": objects[first : first + PAGE_SIZE]}
                out.write(orjson.dumps(page) + b"\n")
    return cluster_file, pages_file


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs=2, metavar=("MODE", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return

    with tempfile.TemporaryDirectory(prefix="limitguard-state-load-") as work:
        cluster_file, pages_file = write_files(Path(work), args.nodes, args.pods, args.pending)
        print(
            f"cluster: {args.nodes} nodes, {args.pods} pods ({args.pending} pending), "
            f"file {cluster_file.stat().st_size / 1e6:.0f} MB; {args.rounds} rounds, medians"
        )
        runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
        for _ in range(args.rounds):
            for mode in MODES:
                runs[mode].append(measure(mode, pages_file if mode == "pages" else cluster_file))

    def median(mode: str, field: str) -> float:
        return statistics.median(run[field] for run in runs[mode])

    baseline = median("parse", "seconds")
    print(
        f"{'mode':<38} {'seconds':>8} {'cpu s':>7} {'vs parse':>9} "
        f"{'imports MB':>11} {'loaded MB':>10} {'peak MB':>8}"
    )
    labels = {
        "parse": "baseline: orjson.loads of the file",
        "file": "state from the file (serve --cluster)",
        "pages": "state from list pages (live feed)",
    }
    for mode in MODES:
        seconds = median(mode, "seconds")
        print(
            f"{labels[mode]:<38} {seconds:>8.2f} {median(mode, 'cpu_seconds'):>7.2f} "
            f"{seconds / baseline:>8.2f}x {median(mode, 'imports_mb'):>11.0f} "
            f"{median(mode, 'loaded_mb'):>10.0f} {median(mode, 'peak_mb'):>8.0f}"
        )
    pods = max(args.pods, 1)
    for mode in ("file", "pages"):
        added = median(mode, "loaded_mb") - median(mode, "imports_mb")
        print(
            f"{mode}: the state adds {added:.0f} MB over the imports, ~{added * 2**20 / pods:.0f} bytes a pod"
        )


if __name__ == "__main__":
    main()
