"""What the chart tests read out of a rendered release: webhooks, the server container, its flags."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from limitguard.cli.configfile import parse_config
from limitguard.core.config import Config
from tests.e2e.chart.conftest import FULLNAME, find, one

Render = Callable[..., list[dict[str, Any]]]
KUBERNETES_VERSION = "1.35"
CRD_KINDS = {("cert-manager.io/v1", "Issuer"), ("cert-manager.io/v1", "Certificate")}
WRITE_VERBS = {
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "escalate",
    "bind",
    "impersonate",
    "*",
}


def webhooks(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    hooks: dict[str, dict[str, Any]] = {}
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for configuration in find(objects, kind):
            for hook in configuration["webhooks"]:
                hooks[hook["name"]] = {**hook, "_kind": kind, "_configuration": configuration}
    return hooks


def server_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    deployment = one(objects, "Deployment", FULLNAME)
    return deployment["spec"]["template"]["spec"]["containers"][0]


def _arg(container: dict[str, Any], flag: str) -> str:
    values = [a.split("=", 1)[1] for a in container["args"] if a.startswith(f"{flag}=")]
    assert len(values) == 1, f"{flag} given {len(values)} times in {container['args']}"
    return values[0]


def _config(objects: list[dict[str, Any]]) -> Config:
    configmap = one(objects, "ConfigMap", f"{FULLNAME}-config")
    return parse_config(yaml.safe_load(configmap["data"]["config.yaml"]))
