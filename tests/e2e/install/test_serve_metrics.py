"""`serve` as a container runs it: mount errors that say what to mount, the plain-HTTP metrics port,
the per-node limit-ratio gauges with their cardinality bound, and the fail-open / decision counters."""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from limitguard.core.config import Config, LimitAwareConfig
from limitguard.core.oversubscription import node_limit_ratios
from limitguard.http.metrics import Metrics
from limitguard.state.store import ClusterState
from limitguard.testing.examples import config, worked_example
from tests.e2e.test_serve_process import DEMO, free_port, serve_once
from tests.support import HANG_GUARD_SECONDS, REPO, binding, node, pod


# -- mounts ---------------------------------------------------------------------------------------
def test_missing_config_file_names_the_mount_and_the_chart_values(tmp_path: Path) -> None:
    missing = tmp_path / "etc" / "config.yaml"
    completed = serve_once(tmp_path, "--config", str(missing), "--cluster", str(DEMO / "cluster.yaml"))
    assert completed.returncode == 2
    assert f"cannot read the configuration file {missing}: No such file or directory" in completed.stderr
    assert f"-v $PWD/config.yaml:{missing}:ro" in completed.stderr
    assert "Helm" in completed.stderr and "leave out --config" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_unwritable_tls_directory_names_the_mount_instead_of_a_temporary_file(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    cert_dir = blocker / "tls"  # cannot be created, even by root: its parent is a file
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "limitguard",
            "serve",
            "--cluster",
            str(DEMO / "cluster.yaml"),
            "--cert-dir",
            str(cert_dir),
            "--port",
            str(free_port()),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert (
        f"{cert_dir} has no tls.crt/tls.key and a self-signed set cannot be written there" in completed.stderr
    )
    assert f"-v $PWD/certs:{cert_dir}:ro" in completed.stderr
    assert "certs.mode" in completed.stderr and ".tmp" not in completed.stderr


def test_half_a_serving_pair_is_reported(tmp_path: Path) -> None:
    cert_dir = tmp_path / "certs"
    cert_dir.mkdir()
    (cert_dir / "tls.crt").write_text("x")
    completed = serve_once(tmp_path, "--cluster", str(DEMO / "cluster.yaml"))
    assert completed.returncode == 2
    assert f"{cert_dir / 'tls.crt'} exists but {cert_dir / 'tls.key'} does not" in completed.stderr


# -- per-node limit ratios ---------------------------------------------------------------------------
def ratio_state() -> ClusterState:
    state = ClusterState()
    state.replace_nodes(
        [
            node("a", cpu="8", memory="16Gi"),
            node(
                "b",
                cpu="4",
                memory="16Gi",
                annotations={"node.koordinator.sh/limit-to-allocatable": '{"cpu": 200}'},
            ),
            node("c", cpu="0", memory="16Gi"),
        ]
    )
    state.replace_namespaces([])
    state.replace_pods(
        [
            pod("p1", node_name="a", cpu="12", memory="4Gi"),
            pod("p2", node_name="b", cpu="6"),
            pod("p3", node_name="c", cpu="1"),
        ]
    )
    return state


def test_node_ratios_cover_checked_resources_only_and_keep_the_highest_past_the_limit() -> None:
    state = ratio_state()
    limit_aware = LimitAwareConfig(default_ratios={"cpu": 150, "memory": 100})
    every = node_limit_ratios(state.nodes(), state.committed, limit_aware)
    found = {(r.node, r.resource): (r.ratio, r.allowed) for r in every.kept}
    # b's annotation replaces the default: only cpu is checked there.
    assert found == {
        ("a", "cpu"): (1.5, 1.5),
        ("a", "memory"): (0.25, 1.0),
        ("b", "cpu"): (1.5, 2.0),
        ("c", "cpu"): (math.inf, 1.5),
        ("c", "memory"): (0.0, 1.0),
    }
    assert every.dropped == 0
    capped = node_limit_ratios(state.nodes(), state.committed, limit_aware, limit=2)
    assert [(r.node, r.resource) for r in capped.kept] == [("c", "cpu"), ("a", "cpu")]
    assert capped.dropped == 3
    nothing = node_limit_ratios(state.nodes(), state.committed, LimitAwareConfig())
    assert [(r.node, r.resource) for r in nothing.kept] == [("b", "cpu")]  # only the annotated node


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def test_node_ratio_gauges_in_the_exposition_respect_the_series_limit() -> None:
    from prometheus_client import generate_latest

    state = ratio_state()
    config_ = Config(limit_aware=LimitAwareConfig(default_ratios={"cpu": 150, "memory": 100}))
    exposed = samples(generate_latest(Metrics(state, config_, node_ratio_series_limit=3).registry).decode())
    ratios = {
        dict(labels)["node"] + "/" + dict(labels)["resource"]: value
        for (name, labels), value in exposed.items()
        if name == "limitguard_node_limit_ratio"
    }
    allowed = {
        dict(labels)["node"] + "/" + dict(labels)["resource"]: value
        for (name, labels), value in exposed.items()
        if name == "limitguard_node_limit_ratio_allowed"
    }
    assert ratios == {"c/cpu": math.inf, "a/cpu": 1.5, "b/cpu": 1.5}
    assert allowed == {"c/cpu": 1.5, "a/cpu": 1.5, "b/cpu": 2.0}
    sources = {
        dict(labels)["node"]: dict(labels)["source"]
        for (name, labels), _ in exposed.items()
        if "node" in dict(labels)
    }
    assert sources == {"a": "default", "b": "annotation", "c": "default"}
    assert exposed[("limitguard_node_ratio_series_dropped", ())] == 2


# -- decision and fail-open counters over the real TLS server -----------------------------------------
async def test_decisions_by_reason_and_fail_open_answers_are_counted(start_server) -> None:
    server = await start_server(worked_example(), config())
    await server.post("/validate", binding("pod5", "node1"))  # denied: exceeds
    await server.post("/validate", binding("pod5", "node2"))  # allowed: fits
    exposed = samples((await server.get("/metrics"))[1])
    decisions = {
        (dict(k[1])["decision"], dict(k[1])["reason"]): v
        for k, v in exposed.items()
        if k[0] == "limitguard_decisions_total"
    }
    assert decisions == {("denied", "exceeds"): 1.0, ("allowed", "fits"): 1.0}
    assert not [k for k in exposed if k[0] == "limitguard_fail_open_answers_total"]

    syncing = ClusterState()  # never listed: the state cannot decide (whileNotReady: Allow)
    server = await start_server(syncing, config())
    status, body = await server.post("/validate", binding("pod5", "node1"))
    assert status == 200 and body["response"]["allowed"] is True
    exposed = samples((await server.get("/metrics"))[1])
    assert (
        exposed[
            ("limitguard_fail_open_answers_total", (("reason", "state-incomplete"), ("webhook", "validate")))
        ]
        == 1.0
    )


# -- the plain-HTTP metrics port of a real `serve` process ------------------------------------------------
async def test_metrics_port_serves_only_metrics_over_plain_http(tmp_path: Path) -> None:
    port, metrics_port = free_port(), free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "limitguard",
            "serve",
            "--config",
            str(DEMO / "config.yaml"),
            "--cluster",
            str(DEMO / "cluster.yaml"),
            "--cert-dir",
            str(tmp_path / "certs"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--metrics-port",
            str(metrics_port),
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "serve.log").open("w"),
    )
    base = f"http://127.0.0.1:{metrics_port}"
    try:
        async with aiohttp.ClientSession() as session:
            deadline = time.monotonic() + HANG_GUARD_SECONDS  # a hang guard only
            text = None
            while text is None:
                assert process.poll() is None, (tmp_path / "serve.log").read_text()
                assert time.monotonic() < deadline, "the metrics port never answered"
                try:
                    async with session.get(base + "/metrics") as response:
                        assert response.status == 200
                        assert response.headers["Content-Type"].startswith("text/plain")
                        text = await response.text()
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            exposed = samples(text)
            # The demo: node1 holds 6 + 4 cpu of 8 allocatable (ratio 125 %).
            node1_cpu = (("node", "node1"), ("resource", "cpu"), ("source", "default"))
            assert exposed[("limitguard_node_limit_ratio", node1_cpu)] == 1.25
            assert exposed[("limitguard_node_limit_ratio_allowed", node1_cpu)] == 1.25
            assert exposed[("limitguard_state_ready", ())] == 1.0
            for path in ("/validate", "/healthz", "/readyz", "/extender/filter"):
                async with session.get(base + path) as response:
                    assert response.status == 404, path
            async with session.post(base + "/validate", data=b"{}") as response:
                assert response.status in (404, 405)
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode == 0


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--metrics-port", "argument --metrics-port: 'lots' is not a port number: use 1-65535"),
        ("--node-ratio-series-limit", "invalid int value"),
    ],
)
def test_new_serve_flags_reject_non_numbers(tmp_path: Path, flag: str, message: str) -> None:
    completed = serve_once(tmp_path, "--cluster", str(DEMO / "cluster.yaml"), flag, "lots")
    assert completed.returncode == 2 and message in completed.stderr
