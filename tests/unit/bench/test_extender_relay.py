"""bench.extender_relay counts what it says: calls relayed by the follower, on both replicas."""

from __future__ import annotations

from pathlib import Path

import orjson

from bench.extender_relay import PEER_NAME, count
from bench.synthetic import make_cluster
from limitguard.certs import generate as certs


async def test_a_call_through_the_follower_is_counted_on_both_replicas(tmp_path: Path) -> None:
    cert_dir, cluster_file = tmp_path / "certs", tmp_path / "cluster.json"
    certs.write(certs.generate(["localhost", "127.0.0.1", PEER_NAME]), cert_dir)
    cluster_file.write_bytes(orjson.dumps(make_cluster(20, 40, pending=0)))
    figures = await count(cert_dir, cluster_file, [f"node-{index:05d}" for index in range(10)], 3)
    # count() itself checks that the follower relayed every call it was sent
    assert figures["python calls, through the follower"] > figures["python calls, leader"] > 0
    assert figures["body bytes relayed"] > 0
