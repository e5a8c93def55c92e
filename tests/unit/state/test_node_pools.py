"""Node pools: which ratio map a node takes (annotation, first matching pool, cluster default), that it
follows the node's labels as they change, and that every answer names where it came from."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest

from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.cli.configfile import parse_config
from limitguard.core.config import Config
from limitguard.core.oversubscription import node_limit_ratios
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.core.scoring import ScorerConfig
from limitguard.core.scoring.limitaware import LimitAwareArgs
from limitguard.extender.config import ExtenderConfig
from limitguard.extender.protocol import decode_extender_args
from limitguard.extender.service import Extender
from limitguard.http.node_ratio_metrics import NodeRatioCollector
from limitguard.state.store import ClusterState
from limitguard.testing.builders import binding, node, pod
from limitguard.testing.reference import ReferenceExtender
from tests.integration.extender.shapes import args_names, args_nodes, scheduler_node, scheduler_pod

GPU = {"karpenter.sh/nodepool": "gpu"}
SPOT = {"karpenter.sh/capacity-type": "spot"}


def pools_config() -> Config:
    """Cluster default cpu 125% / memory 100%; gpu 200% cpu only; spot 100% cpu, memory 100%."""
    return parse_config(
        {
            "apiVersion": "limitguard.io/v1alpha1",
            "kind": "LimitGuardConfiguration",
            "limitAware": {
                "defaultLimitToAllocatableRatio": {"cpu": 125, "memory": 100},
                "nodePools": [
                    {
                        "name": "gpu",
                        "nodeSelector": {"matchLabels": GPU},
                        "limitToAllocatableRatio": {"cpu": 200},
                    },
                    {
                        "name": "spot",
                        "nodeSelector": {
                            "matchExpressions": [
                                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
                            ]
                        },
                        "limitToAllocatableRatio": {"cpu": 100, "memory": "100%"},
                    },
                ],
            },
        }
    )


def pooled_state(config: Config, *nodes: dict[str, Any]) -> ClusterState:
    state = ClusterState(node_pools=config.limit_aware.node_pools)
    state.replace_nodes(list(nodes))
    state.replace_namespaces([])
    state.replace_pods([])
    for kind in ("nodes", "pods", "namespaces"):
        state.mark_synced(kind)
    return state


def ask(validator: Validator, body: dict[str, Any]) -> Any:
    return validator(decode_review(orjson.dumps(body)))


def sources(state: ClusterState) -> dict[str, tuple[str, dict[str, int] | None]]:
    return {record.name: (record.ratio_source.label, record.ratio_override) for record in state.nodes()}


# -- precedence ----------------------------------------------------------------------------------
def test_annotation_then_first_matching_pool_then_default() -> None:
    config = pools_config()
    state = pooled_state(
        config,
        node("annotated", labels=GPU, annotations={RATIO_ANNOTATION: '{"cpu": 150}'}),
        node("gpu-1", labels=GPU),
        node("spot-1", labels=SPOT),
        node("plain"),
    )
    assert sources(state) == {
        "annotated": ("annotation", {"cpu": 150}),
        "gpu-1": ("pool:gpu", {"cpu": 200}),
        "spot-1": ("pool:spot", {"cpu": 100, "memory": 100}),
        "plain": ("default", None),
    }


def test_a_node_matching_two_pools_takes_the_first_listed() -> None:
    config = pools_config()
    state = pooled_state(config, node("both", labels={**SPOT, **GPU}))
    assert sources(state)["both"] == ("pool:gpu", {"cpu": 200})


def test_levels_are_never_merged() -> None:
    """The gpu pool lists cpu only: memory, limited by the cluster default elsewhere, is not limited."""
    config = pools_config()
    state = pooled_state(config, node("gpu-1", labels=GPU, memory="8Gi"), node("plain", memory="8Gi"))
    state.upsert_pod(pod("big", memory="64Gi", phase="Pending"))
    validator = Validator(state, config)
    assert ask(validator, binding("big", "gpu-1", uid="b1")).allowed
    denied = ask(validator, binding("big", "plain", uid="b2"))
    assert not denied.allowed and "(cluster default)" in denied.message


def test_the_denial_names_the_pool() -> None:
    config = pools_config()
    state = pooled_state(config, node("gpu-1", labels=GPU))
    state.replace_pods([pod("held", node_name="gpu-1", cpu="14"), pod("new", cpu="4", phase="Pending")])
    response = ask(Validator(state, config), binding("new", "gpu-1"))
    assert not response.allowed
    assert (
        'node "gpu-1": cpu limit 4 exceeds remaining 2 (allocated 14 of capacity 16 = 8 allocatable x 200% '
        "(pool gpu))" in response.message
    )


def test_a_malformed_annotation_on_a_pooled_node_falls_back_to_its_pool() -> None:
    config = pools_config()
    state = pooled_state(config, node("gpu-1", labels=GPU, annotations={RATIO_ANNOTATION: '{"cpu": "150"}'}))
    record = state.node("gpu-1")
    assert record is not None
    assert (record.ratio_source.label, record.ratio_override) == ("pool:gpu", {"cpu": 200})
    assert record.ratio_problem is not None
    state.upsert_pod(pod("p", cpu="15", phase="Pending"))  # fits 200% of 8 = 16, not 150% = 12
    response = ask(Validator(state, config), binding("p", "gpu-1"))
    assert response.allowed
    assert list(response.warnings) == [f"node gpu-1: malformed {RATIO_ANNOTATION}, pool gpu ratios used"]


# -- the node's labels change ----------------------------------------------------------------------
def test_a_node_relabelled_while_pods_are_bound_moves_pool_at_once() -> None:
    """gpu (200%: capacity 16) -> spot (100%: 8) -> gpu, with approved bindings held in between."""
    config = pools_config()
    state = pooled_state(config, node("n1", labels=GPU))
    state.replace_pods([pod(f"p{i}", cpu="3", phase="Pending") for i in range(4)])
    validator = Validator(state, config)
    assert ask(validator, binding("p0", "n1", uid="b0")).allowed  # 3 of 16
    assert ask(validator, binding("p1", "n1", uid="b1")).allowed  # 6 of 16
    state.upsert_node(node("n1", labels=SPOT))  # the autoscaler's relabel: 6 held of 8 now
    denied = ask(validator, binding("p2", "n1", uid="b2"))
    assert not denied.allowed
    assert "(allocated 6 of capacity 8 = 8 allocatable x 100% (pool spot))" in denied.message
    # the node table follows too: an unbound pod of 3 finds no room (n1 has 2 left)
    created = ask(validator, _create(pod("p9", cpu="3", phase="Pending")))
    assert created.allowed and created.reason == "no-room" and "(pool spot)" in created.message
    assert [(r.resource, r.source, r.allowed) for r in _ratios(state, config)] == [
        ("cpu", "pool:spot", 1.0),
        ("memory", "pool:spot", 1.0),
    ]
    state.upsert_node(node("n1", labels=GPU))
    assert ask(validator, binding("p2", "n1", uid="b3")).allowed  # 9 of 16
    assert [(r.resource, r.source, r.allowed) for r in _ratios(state, config)] == [("cpu", "pool:gpu", 2.0)]


def test_a_relist_resolves_the_pools_again() -> None:
    config = pools_config()
    state = pooled_state(config, node("n1", labels=GPU), node("n2"))
    state.replace_nodes([node("n1"), node("n2", labels=SPOT)])
    assert {name: source for name, (source, _) in sources(state).items()} == {
        "n1": "default",
        "n2": "pool:spot",
    }
    table = state.node_table()
    capacity = table.capacity("cpu", 125)
    assert capacity is not None
    assert [int(capacity.cap[table.rows[name]]) for name in ("n1", "n2")] == [10_000, 8_000]


def _create(pod_object: dict[str, Any]) -> dict[str, Any]:
    from limitguard.testing.builders import pod_create

    return pod_create(pod_object)


def _ratios(state: ClusterState, config: Config) -> list[Any]:
    return node_limit_ratios(state.nodes(), state.committed, config.limit_aware).kept


# -- metrics ---------------------------------------------------------------------------------------
def test_the_node_ratio_gauges_carry_the_source() -> None:
    config = pools_config()
    state = pooled_state(config, node("gpu-1", labels=GPU), node("plain"))
    families = {family.name: family for family in NodeRatioCollector(state, config).collect()}
    allowed = {
        (sample.labels["node"], sample.labels["resource"]): (sample.labels["source"], sample.value)
        for sample in families["limitguard_node_limit_ratio_allowed"].samples
    }
    assert allowed == {
        ("gpu-1", "cpu"): ("pool:gpu", 2.0),
        ("plain", "cpu"): ("default", 1.25),
        ("plain", "memory"): ("default", 1.0),
    }


# -- the extender --------------------------------------------------------------------------------
def _extender(state: ClusterState, config: Config) -> Extender:
    return Extender(state, config, ExtenderConfig(()))


@pytest.mark.parametrize("columnar", [True, False])
def test_the_extender_filter_reason_names_the_source(columnar: bool) -> None:
    config = pools_config()
    state = pooled_state(config, node("gpu-1", labels=GPU, cpu="1"), node("plain", cpu="1"), node("roomy"))
    extender = (Extender if columnar else ReferenceExtender)(state, config, ExtenderConfig(()))
    args = decode_extender_args(
        orjson.dumps(args_names(scheduler_pod(cpu_limit="4"), ["gpu-1", "plain", "roomy"]))
    )
    outcome = extender.filter(args)
    assert outcome.passed == ["roomy"]
    assert outcome.failed == {
        "gpu-1": "limit-to-allocatable ratio exceeded (cpu; pool gpu)",
        "plain": "limit-to-allocatable ratio exceeded (cpu; cluster default)",
    }


def test_the_extender_picks_pools_from_the_node_objects_the_scheduler_sends() -> None:
    """nodeCacheCapable false: the scheduler's Node carries the pool label the cache does not know."""
    config = pools_config()
    state = pooled_state(config, node("n1"))  # cached without labels: default 125% of 8 = 10
    sent = scheduler_node("n1")
    sent["metadata"]["labels"].update(SPOT)  # spot: 100% of 8 = 8
    outcome = _extender(state, config).filter(
        decode_extender_args(orjson.dumps(args_nodes(scheduler_pod(cpu_limit="9"), [sent])))
    )
    assert outcome.failed == {"n1": "limit-to-allocatable ratio exceeded (cpu; pool spot)"}


@pytest.mark.parametrize("columnar", [True, False])
def test_scoring_ranks_pools_above_the_scoring_default(columnar: bool) -> None:
    """LimitAwareArgs' default (cpu 100%) stands in for the cluster default only: the pooled node is
    scored against its pool's 200%. The pod's 4 cpu on 8 allocatable: gpu-1 (16 - 4) * 100 / 16 = 75,
    plain (8 - 4) * 100 / 8 = 50."""
    config = pools_config()
    state = pooled_state(config, node("gpu-1", labels=GPU), node("plain"))
    args = LimitAwareArgs(weights={"cpu": 1}, default_ratios={"cpu": 100})
    extender = (Extender if columnar else ReferenceExtender)(
        state, config, ExtenderConfig((ScorerConfig("LimitAware", 1, args),))
    )
    outcome = extender.prioritize(
        decode_extender_args(orjson.dumps(args_names(scheduler_pod(cpu_limit="4"), ["gpu-1", "plain"])))
    )
    sheet = outcome.sheet
    assert sheet is not None
    assert sheet.columns[0].raw == [75, 50]


def test_explain_json_names_the_source(tmp_path: Any, capsys: Any) -> None:
    from limitguard.cli import explain as explain_command
    from tests.support import run_command

    cluster, config, pod_file = _files(tmp_path)
    code, out, _ = run_command(
        explain_command,
        [str(pod_file), "--cluster", str(cluster), "--config", str(config), "-o", "json"],
        capsys,
    )
    assert code == 0
    rows = {row["node"]: row for row in json.loads(out)["nodes"]}
    assert {name: row["ratioSource"] for name, row in rows.items()} == {
        "gpu-1": "pool:gpu",
        "plain": "default",
    }
    assert rows["gpu-1"]["shortfalls"] == [
        "cpu limit 4 exceeds remaining 2 (allocated 14 of capacity 16 = 8 allocatable x 200% (pool gpu))"
    ]


def test_audit_from_a_cluster_file_names_the_pool(tmp_path: Any, capsys: Any) -> None:
    from limitguard.cli import audit as audit_command
    from tests.support import run_command

    cluster, config, _ = _files(tmp_path, held="17")
    code, out, _ = run_command(audit_command, ["--cluster", str(cluster), "--config", str(config)], capsys)
    assert code == 1
    assert (
        "  over: cpu limits 17 exceed capacity 16 by 1 (212% of 8 allocatable, ratio 200% (pool gpu))" in out
    )
    code, out, _ = run_command(
        audit_command, ["--cluster", str(cluster), "--config", str(config), "-o", "json"], capsys
    )
    assert [(f["node"], f["ratioSource"]) for f in json.loads(out)["findings"]] == [("gpu-1", "pool:gpu")]


def _files(tmp_path: Any, held: str = "14") -> tuple[Any, Any, Any]:
    """A cluster file (gpu-1 in pool gpu with *held* cpu of limits, plain), its config and a pod of 4."""
    cluster = tmp_path / "cluster.json"
    cluster.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
                    {"apiVersion": "v1", "kind": "Node", **node("gpu-1", labels=GPU)},
                    {"apiVersion": "v1", "kind": "Node", **node("plain")},
                    {"apiVersion": "v1", "kind": "Pod", **pod("held", node_name="gpu-1", cpu=held)},
                ],
            }
        )
    )
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\nlimitAware:\n"
        "  defaultLimitToAllocatableRatio: {cpu: 125}\n"
        "  nodePools:\n"
        "  - name: gpu\n    nodeSelector: {matchLabels: {karpenter.sh/nodepool: gpu}}\n"
        "    limitToAllocatableRatio: {cpu: 200}\n"
    )
    pod_file = tmp_path / "pod.json"
    pod_file.write_text(
        json.dumps({"apiVersion": "v1", "kind": "Pod", **pod("web", cpu="4", phase="Pending")})
    )
    return cluster, config, pod_file
