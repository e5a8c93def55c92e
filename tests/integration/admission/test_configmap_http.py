"""ConfigMaps carrying a KubeSchedulerConfiguration are validated on CREATE/UPDATE (SPEC 6)."""

import asyncio
import copy
import json
import threading
from pathlib import Path

import yaml

import limitguard
from limitguard.admission import configmaps
from limitguard.kube.filefeed import load_cluster_file
from limitguard.state.store import ClusterState
from limitguard.testing.server import HANG_GUARD_SECONDS
from tests.support import FIXTURES, fixture, review

DEMO = Path(limitguard.__file__).parent / "demo"


def configmap_request(configmap: dict, operation: str = "CREATE") -> dict:
    base = fixture("admissionrequest-configmap-create-openshift-oc.kyverno-validate-manifest.json")
    request = copy.deepcopy(base)
    request["operation"] = operation
    request["name"] = configmap["metadata"]["name"]
    request["object"] = configmap
    return review(request)


def koordinator_configmap() -> dict:
    return yaml.safe_load(
        (FIXTURES / "schedcfg-v1-configmap-koord-scheduler.koordinator-config-manager.yaml").read_text()
    )


async def test_configmaps_without_a_scheduler_config_pass_untouched(start_server):
    server = await start_server(ClusterState())
    body = review(fixture("admissionrequest-configmap-create-openshift-oc.kyverno-validate-manifest.json"))
    status, answer = await server.post("/validate", body)
    assert status == 200 and answer["response"]["allowed"] and "warnings" not in answer["response"]


async def test_shipped_koordinator_config_is_allowed_without_warnings(start_server):
    """Judged for koord-scheduler (its plugins say so): Reservation's weight 5000 is its design, and its
    own plugins are not "out-of-tree" there (koordinator config/manager/scheduler-config.yaml)."""
    server = await start_server(ClusterState())
    _, answer = await server.post("/validate", configmap_request(koordinator_configmap()))
    response = answer["response"]
    assert response["allowed"] is True
    assert response.get("warnings", []) == []


async def test_a_broken_scheduler_config_is_denied_with_every_error_and_path(start_server):
    server = await start_server(ClusterState())
    configmap = koordinator_configmap()
    key = next(iter(configmap["data"]))
    config = yaml.safe_load(configmap["data"][key])
    config["profiles"][0]["pluginConfig"][0]["args"]["scoringStrategy"]["type"] = "MostAlocated"
    config["healthzBindAddress"] = "0.0.0.0:10251"
    configmap["data"][key] = yaml.safe_dump(config)
    _, answer = await server.post("/validate", configmap_request(configmap, "UPDATE"))
    response = answer["response"]
    assert response["allowed"] is False
    assert response["status"]["code"] == 422 and response["status"]["reason"] == "Invalid"
    message = response["status"]["message"]
    assert f"data[{key}].profiles[0].pluginConfig[0].args.scoringStrategy.type" in message
    assert '"MostAlocated"' in message
    assert f"data[{key}].healthzBindAddress" in message
    assert "2 error(s)" in message


async def test_deletes_are_not_validated(start_server):
    server = await start_server(ClusterState())
    configmap = koordinator_configmap()
    key = next(iter(configmap["data"]))
    configmap["data"][key] = "kind: KubeSchedulerConfiguration\n: broken : yaml"
    _, answer = await server.post("/validate", configmap_request(configmap, "DELETE"))
    assert answer["response"]["allowed"] is True


async def test_a_slow_scheduler_config_check_holds_up_neither_bindings_nor_the_loop(
    start_server, monkeypatch
):
    """Validating a large ConfigMap takes seconds and anyone may send one: it runs in a worker thread,
    one at a time, while bindings are answered on the loop."""
    started, finish = threading.Event(), threading.Event()
    checked: list[str] = []

    def held_check(configmap: dict, **_: object) -> None:
        checked.append(configmap["metadata"]["name"])
        started.set()
        finish.wait(HANG_GUARD_SECONDS)

    monkeypatch.setattr(configmaps, "configmap_check", held_check)
    state = ClusterState()
    load_cluster_file(state, DEMO / "cluster.yaml")
    server = await start_server(state)
    one, two = koordinator_configmap(), koordinator_configmap()
    one["metadata"]["name"], two["metadata"]["name"] = "one", "two"
    pending = [asyncio.create_task(server.post("/validate", configmap_request(c))) for c in (one, two)]
    await asyncio.to_thread(started.wait, HANG_GUARD_SECONDS)

    status, answer = await server.post(
        "/validate", json.loads((DEMO / "binding-pod5-node2.json").read_text())
    )
    assert status == 200 and answer["response"]["allowed"] is True
    assert len(checked) == 1 and not any(task.done() for task in pending)  # one check at a time, still held

    finish.set()
    answers = [answer for _, answer in await asyncio.gather(*pending)]
    assert sorted(checked) == ["one", "two"]
    assert all(a["response"]["allowed"] for a in answers)


async def test_the_annotation_names_a_build_and_an_unknown_one_never_blocks_the_write(start_server):
    """Koordinator v1.8.0's file enables Coscheduling at preScore and score, which v1.7.0's Coscheduling
    lacks: denied for koord-scheduler@v1.7.0, naming the build that has them; admitted with a warning for
    a build limitguard has no table for (its newest release, v1.8.0, applies)."""
    server = await start_server(ClusterState())
    older = koordinator_configmap()
    older["metadata"]["annotations"] = {"limitguard.io/scheduler": "koord-scheduler@v1.7.0"}
    _, answer = await server.post("/validate", configmap_request(older))
    response = answer["response"]
    assert response["allowed"] is False and response["status"]["code"] == 422
    assert "--scheduler koord-scheduler@v1.8.0" in response["status"]["message"]
    newer = koordinator_configmap()
    newer["metadata"]["annotations"] = {"limitguard.io/scheduler": "koord-scheduler@v1.9.0"}
    _, answer = await server.post("/validate", configmap_request(newer))
    response = answer["response"]
    assert response["allowed"] is True
    assert any("koord-scheduler@v1.9.0: unknown build, v1.8.0 applies" in w for w in response["warnings"])
