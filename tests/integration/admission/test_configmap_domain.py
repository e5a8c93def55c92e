"""The ConfigMap webhook denies the design documents' args that koord-scheduler would start with but
misread (a typo'd type, a negative weight, an invalid resource name), naming the field; a weight of 0 is
admitted with a warning, and the corrected user-manual example is admitted clean."""

import yaml

from limitguard.state.store import ClusterState
from tests.integration.admission.test_configmap_http import configmap_request
from tests.support import FIXTURES

KEY = "koord-scheduler-config"
ARGS = f"data[{KEY}].profiles[0].pluginConfig"
EXAMPLE = FIXTURES / "schedcfg-v1-profiles-fragment-nodefitplus-scarceavoid.koordinator-website.yaml"


def configmap(edit=None) -> dict:
    """The user manual's NodeResourcesFitPlus / ScarceResourceAvoidance profile in a ConfigMap, after ``edit``."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        **yaml.safe_load(EXAMPLE.read_text(encoding="utf-8")),
    }
    if edit:
        edit(config["profiles"][0]["pluginConfig"])
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "koord-scheduler-config", "namespace": "koordinator-system"},
        "data": {KEY: yaml.safe_dump(config)},
    }


async def post(server, document: dict) -> dict:
    _, answer = await server.post("/validate", configmap_request(document, "UPDATE"))
    return answer["response"]


async def test_the_corrected_example_is_admitted_without_warnings(start_server):
    server = await start_server(ClusterState())
    response = await post(server, configmap())
    assert response["allowed"] is True and response.get("warnings", []) == []


def typo(entries):
    entries[0]["args"]["resources"]["nvidia.com/gpu"]["type"] = "MostAlocated"


def negative(entries):
    entries[0]["args"]["resources"]["cpu"]["weight"] = -1


def bad_name(entries):
    entries[1]["args"]["resources"] = ["nvidia.com/gpu/extra"]


async def test_each_misread_value_is_denied_with_its_field_path(start_server):
    server = await start_server(ClusterState())
    cases = [
        (typo, f'{ARGS}[0].args.resources["nvidia.com/gpu"].type', '"MostAlocated"'),
        (negative, f"{ARGS}[0].args.resources.cpu.weight", "returns an invalid score"),
        (bad_name, f"{ARGS}[1].args.resources[0]", "never counts it as scarce"),
    ]
    for edit, path, says in cases:
        response = await post(server, configmap(edit))
        assert response["allowed"] is False, path
        assert response["status"]["code"] == 422
        message = response["status"]["message"]
        assert path in message and says in message and "koord-scheduler v1.8.0 starts with it" in message
        assert "1 error(s)" in message


async def test_a_weight_of_0_is_admitted_with_a_warning(start_server):
    server = await start_server(ClusterState())

    def zero(entries):
        entries[0]["args"]["resources"]["memory"]["weight"] = 0

    response = await post(server, configmap(zero))
    assert response["allowed"] is True
    assert any(
        w.startswith(f"limitguard: {ARGS}[0].args.resources.memory.weight: weight 0")
        for w in response["warnings"]
    ), response["warnings"]


async def test_the_design_documents_kind_is_denied_naming_the_kind_koord_scheduler_decodes(start_server):
    server = await start_server(ClusterState())

    def legacy(entries):
        entries[0]["args"]["kind"] = "ResourceTypesArgs"

    response = await post(server, configmap(legacy))
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert f"{ARGS}[0].args.kind" in message and '"NodeResourcesFitPlusArgs"' in message
