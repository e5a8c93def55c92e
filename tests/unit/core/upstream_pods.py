"""The pod model builders for the upstream PodRequests / PodLimits tables (test_podresources_upstream_*).

They build what kubernetes/component-helpers `resource/helpers_test.go` (tag v0.35.7, commit
e2af1bd7bef973f14494f15bbea1eaa216cff15c) builds with its Go literals: containers, init containers
(sidecars with restartPolicy Always), container statuses, overhead, pod-level resources, and parse
them with limitguard.core.podresources.parse_pod_resources.
"""

from __future__ import annotations

from typing import Any

import pytest

from limitguard.core.podresources import parse_pod_resources
from limitguard.core.podrules import RULES
from limitguard.core.quantity import to_units

ALWAYS = "Always"
# The v0.35.7 tables hold unchanged at v0.37.0-beta.0 (that tag only adds cases), so each runs under
# the rules of both the 1.35 helpers and the 1.37 helpers.
HELPERS_RULES = [pytest.param(RULES[35], id="helpers-v0.35.7"), pytest.param(RULES[37], id="helpers-v0.37")]
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def units(resources: dict[str, str]) -> dict[str, int]:
    return {name: to_units(name, value) for name, value in resources.items()}


def ctr(name: str = "", req: dict | None = None, lim: dict | None = None, sidecar: bool = False) -> dict:
    body: dict[str, Any] = {"name": name, "resources": {}}
    if req is not None:
        body["resources"]["requests"] = req
    if lim is not None:
        body["resources"]["limits"] = lim
    if sidecar:
        body["restartPolicy"] = ALWAYS
    return body


def status(
    name: str, req: dict | None = None, lim: dict | None = None, allocated: dict | None = None
) -> dict:
    body: dict[str, Any] = {"name": name, "resources": {}}
    if req is not None:
        body["resources"]["requests"] = req
    if lim is not None:
        body["resources"]["limits"] = lim
    if allocated is not None:
        body["allocatedResources"] = allocated
    return body


def pod(
    containers=(),
    init=(),
    overhead=None,
    statuses=(),
    init_statuses=(),
    conditions=(),
    pod_level: dict | None = None,
):
    spec: dict[str, Any] = {"containers": list(containers), "initContainers": list(init)}
    if overhead:
        spec["overhead"] = overhead
    if pod_level is not None:
        spec["resources"] = pod_level
    st = {
        "containerStatuses": list(statuses),
        "initContainerStatuses": list(init_statuses),
        "conditions": list(conditions),
    }
    return parse_pod_resources(spec, st)


def cpu(value: str) -> dict[str, str]:
    return {"cpu": value}


def mem(value: str) -> dict[str, str]:
    return {"memory": value}
