"""Node pools' cost: loading a cluster with N pools configured against none, and the binding check.

    flock /tmp/bench.lock .venv/bin/python -m bench.pools        # 15,000 nodes, 15,000 pods, 20 pools

Every node carries a pool label `karpenter.sh/nodepool: p<i mod (N+1)>`, so the nodes spread over
the N pools and the cluster default (label p<N>, which no pool selects: those nodes test every
selector). Half the pools select with matchLabels, half with a matchExpressions In. Both loads read
the same file, so the one difference is the pools in the configuration.

- state load: `bench.state_load`'s fresh-process `file` mode without pools and with N pools,
  alternating over --rounds; the medians of CPU seconds (the machine is shared: wall time follows
  the neighbours) and their ratio;
- binding path: in one fresh process, two states loaded from the file (without pools / with N) and a
  Validator each; rounds alternate between them, each timing --bindings `pods/binding` reviews of
  pending pods to random nodes (decode and check: what the binding webhook does per request).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from bench.poolconfig import POOL_LABEL
from bench.state_load import measure

REPO = Path(__file__).resolve().parents[1]


def write_cluster(path: Path, nodes: int, pods: int, pending: int, pools: int) -> list[tuple[str, str]]:
    """The synthetic cluster with pool labels on its nodes; (namespace, name) of its pending pods."""
    from bench.synthetic import make_cluster

    cluster = make_cluster(nodes, pods, pending)
    index = 0
    for item in cluster["items"]:
        if item["kind"] == "Node":
            item["metadata"]["labels"][POOL_LABEL] = f"p{index % (pools + 1)}"
            index += 1
    path.write_bytes(orjson.dumps(cluster))
    return [
        (item["metadata"]["namespace"], item["metadata"]["name"])
        for item in cluster["items"]
        if item["kind"] == "Pod" and not item["spec"].get("nodeName")
    ]


BINDING_CHILD = """
import random, sys, time
import orjson
from bench.admission import binding_body
from bench.poolconfig import node_pools
from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.core.config import Config, LimitAwareConfig
from limitguard.kube.filefeed import load_cluster_file
from limitguard.state.store import ClusterState

path, pool_count, count, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
pending = orjson.loads(open(sys.argv[5], "rb").read())
validators = {}
for label, pools in (("none", ()), ("pools", node_pools(pool_count))):
    state = ClusterState(float("inf"), node_pools=pools)
    load_cluster_file(state, path)
    config = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 150, "memory": 150}, node_pools=pools))
    validators[label] = Validator(state, config)
nodes = [record.name for record in state.nodes()]
rng = random.Random(3)
for round_index in range(rounds):
    bodies = [
        binding_body(i, name, namespace, rng.choice(nodes))
        for i, (namespace, name) in enumerate(pending[round_index * count : (round_index + 1) * count])
    ]
    for label, validator in validators.items():
        started = time.process_time()
        for body in bodies:
            validator(decode_review(body))
        print(label, (time.process_time() - started) / len(bodies) * 1e6, flush=True)
"""


def binding_rounds(path: Path, pools: int, pending: list[tuple[str, str]], count: int, rounds: int) -> dict:
    pending_file = path.with_name("pending.json")
    pending_file.write_bytes(orjson.dumps(pending))
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            BINDING_CHILD,
            str(path),
            str(pools),
            str(count),
            str(rounds),
            str(pending_file),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    found: dict[str, list[float]] = {"none": [], "pools": []}
    for line in out.splitlines():
        label, micros = line.split()
        found[label].append(float(micros))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=15_000)
    parser.add_argument("--pods", type=int, default=15_000)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--pools", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bindings", type=int, default=2000, help="binding reviews per round and side")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="limitguard-pools-") as work:
        path = Path(work) / "cluster.json"
        pending = write_cluster(path, args.nodes, args.pods, args.pending, args.pools)
        print(
            f"cluster: {args.nodes} nodes, {args.pods} pods ({args.pending} pending), {args.pools} pools; "
            f"{args.rounds} alternating rounds, medians"
        )
        loads: dict[str, list[float]] = {"file": [], f"pools:{args.pools}": []}
        for _ in range(args.rounds):
            for mode in loads:
                loads[mode].append(measure(mode, path)["cpu_seconds"])
        base, pooled = (statistics.median(loads[mode]) for mode in loads)
        print(
            f"state load (CPU s): {base:.2f} s without pools, {pooled:.2f} s with {args.pools} "
            f"({pooled / base:.1%}); rounds {' '.join(f'{x:.2f}' for x in loads['file'])} / "
            f"{' '.join(f'{x:.2f}' for x in loads[f'pools:{args.pools}'])}",
            flush=True,
        )
        rounds = min(args.rounds, len(pending) // args.bindings)
        bindings = binding_rounds(path, args.pools, pending, args.bindings, rounds)
    base, pooled = statistics.median(bindings["none"]), statistics.median(bindings["pools"])
    print(
        f"binding review (CPU us): {base:.1f} us without pools, {pooled:.1f} us with {args.pools} ({pooled / base:.1%}); "
        f"rounds {' '.join(f'{x:.1f}' for x in bindings['none'])} / {' '.join(f'{x:.1f}' for x in bindings['pools'])}"
    )


if __name__ == "__main__":
    main()
