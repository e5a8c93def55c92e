"""Through the ConfigMap webhook, a denial names the build the ``limitguard.io/scheduler`` annotation
chooses: the same bad file under each tabled build of koord-scheduler and of scheduler-plugins."""

import yaml

from limitguard.state.store import ClusterState
from tests.integration.admission.test_configmap_domain import configmap, post, typo
from tests.unit.schedcfg.test_build_named import KOORD_BUILDS, SIGS_BUILDS


def annotated(document: dict, spec: str) -> dict:
    document["metadata"]["annotations"] = {"limitguard.io/scheduler": spec}
    return document


def sigs_configmap() -> dict:
    """TargetLoadPacking with a metric provider type its New refuses (no watcherAddress)."""
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "scheduler-plugins-scheduler",
                "plugins": {"score": {"enabled": [{"name": "TargetLoadPacking"}]}},
                "pluginConfig": [
                    {"name": "TargetLoadPacking", "args": {"metricProvider": {"type": "Graphite"}}}
                ],
            }
        ],
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "scheduler-config", "namespace": "scheduler-plugins"},
        "data": {"scheduler-config.yaml": yaml.safe_dump(config)},
    }


async def denial(server, document: dict) -> str:
    response = await post(server, document)
    assert response["allowed"] is False and response["status"]["code"] == 422, response
    return response["status"]["message"]


async def test_each_koord_scheduler_build_is_the_one_the_denial_names(start_server):
    server = await start_server(ClusterState())
    for spec, label in KOORD_BUILDS.items():
        message = await denial(server, annotated(configmap(typo), spec))
        assert f"{label} starts with it, but NodeResourcesFitPlus scores" in message, message
        assert not any(other in message for other in KOORD_BUILDS.values() if other != label), message


async def test_each_scheduler_plugins_build_is_the_one_the_denial_names(start_server):
    server = await start_server(ClusterState())
    for spec, label in SIGS_BUILDS.items():
        message = await denial(server, annotated(sigs_configmap(), spec))
        assert "metricProvider.type" in message and f"({label} does not start)" in message, message
        assert not any(other in message for other in SIGS_BUILDS.values() if other != label), message
