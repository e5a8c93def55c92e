"""ConfigMaps carrying a KubeSchedulerConfiguration are validated on CREATE/UPDATE (SPEC 6)."""

import copy

import yaml
from limitguard.state.store import ClusterState

from tests.support import FIXTURES, fixture, review


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
