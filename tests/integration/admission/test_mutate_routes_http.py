"""The one-part mutating routes through `limitguard serve` itself (cluster file, configuration file,
client authentication, real TLS) with real AdmissionReviews: /mutate-placement adds only the hint,
/mutate-defaults only the limits, /mutate-scheduler only the scheduler name; a reinvocation with
the patched pod adds no second term; a caller not admitted gets 401 on each.

The apiserver applies each webhook's JSONPatch in turn and, with reinvocationPolicy IfNeeded,
calls a webhook again with the pod as later webhooks left it (kubernetes/kubernetes
staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go).
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import jsonpatch
import orjson
import pytest
import yaml

from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import RunningServe, start_serve
from limitguard.core.defaults import OPT_IN_LABEL, OPT_IN_VALUE
from limitguard.core.hints import HINT_ANNOTATION, PREFERRED
from limitguard.core.usescheduler import USE_SCHEDULER_LABEL, USE_SCHEDULER_VALUE
from tests.integration.http.certificates import CLIENT, certificate_dir, client_context, client_pair
from tests.support import fixture, namespace, node, pod, review

OURS = "limitguard-scheduler"
APISERVER = "limitguard-apiserver-client"
NEW_ROUTES = ("/mutate-placement", "/mutate-defaults", "/mutate-scheduler")
# Captured from real apiservers. KIND: namespace default, limits cpu 0.2 / memory 30Mi, schedulerName
# default-scheduler. GKE: namespace colin-coder, no resources.
KIND = "admissionrequest-pod-create-with-resources-kind.kyverno.json"
GKE = "admissionreview-v1-pod-create-gke-no-resources.kube-rs.json"
CONFIG = f"""apiVersion: limitguard.io/v1alpha1
kind: LimitGuardConfiguration
limitAware:
  defaultLimitToAllocatableRatio: {{cpu: 125}}
useScheduler: {{schedulerName: {OURS}}}
placementHints: {{weight: 60}}
"""
# node-0's 10 cpu of limit capacity (8 x 125%) are taken, node-1 and node-2 are empty: their
# room labels say so, as the leader writes them.
ROOM_CPU = "limitguard.io/limit-room-cpu"


def cluster_file(path: Path) -> Path:
    full = node("node-0", labels={ROOM_CPU: "0"})
    items = [
        namespace("default"),
        namespace("colin-coder", labels={OPT_IN_LABEL: OPT_IN_VALUE}),
        namespace("sched", labels={USE_SCHEDULER_LABEL: USE_SCHEDULER_VALUE}),
        namespace("kube-system"),
        full,
        node("node-1", labels={ROOM_CPU: "10000"}),
        node("node-2", labels={ROOM_CPU: "10000"}),
        pod("big", node_name="node-0", cpu="10"),
    ]
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


@dataclass
class Served:
    url: str
    running: RunningServe
    apiserver: ssl.SSLContext  # the admitted client
    strangers: tuple[ssl.SSLContext, ...]  # no certificate; a certificate of the right CA, another name

    async def post(self, path: str, body: Any, context: ssl.SSLContext | None = None) -> tuple[int, Any]:
        async with (
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context or self.apiserver)) as session,
            session.post(
                self.url + path, data=orjson.dumps(body), headers={"Content-Type": "application/json"}
            ) as answer,
        ):
            raw = await answer.read()
            return answer.status, (orjson.loads(raw) if raw[:1] == b"{" else raw.decode())

    def hints_counted(self, outcome: str, reason: str) -> float:
        value = self.running.services.metrics.registry.get_sample_value(
            "limitguard_placement_hints_total", {"outcome": outcome, "reason": reason}
        )
        return value or 0.0


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    cert_dir = certificate_dir(tmp_path / "tls")
    client_ca = certificate_dir(tmp_path / "client-ca")
    clients = tmp_path / "clients"
    apiserver = client_pair(clients, "apiserver", client_ca, APISERVER, [], CLIENT)
    other = client_pair(clients, "other", client_ca, "kube-scheduler", ["kube-scheduler.svc"], CLIENT)
    (tmp_path / "config.yaml").write_text(CONFIG)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(
        [
            *("--cluster", str(cluster_file(tmp_path / "cluster.yaml"))),
            *("--config", str(tmp_path / "config.yaml"), "--cert-dir", str(cert_dir)),
            *("--host", "127.0.0.1", "--port", "0"),
            *("--client-ca-file", str(client_ca / "ca.crt"), "--client-name", APISERVER),
        ]
    )
    running = await start_serve(args, {})
    try:
        yield Served(
            f"https://127.0.0.1:{running.port}",
            running,
            client_context(cert_dir, apiserver),
            (client_context(cert_dir), client_context(cert_dir, other)),
        )
    finally:
        await running.stop()


def operations(answer: dict[str, Any]) -> list[dict[str, Any]]:
    patch = answer["response"].get("patch")
    return orjson.loads(base64.b64decode(patch)) if patch else []


def applied(body: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    assert answer["response"]["allowed"] is True
    return jsonpatch.apply_patch(copy.deepcopy(body["request"]["object"]), operations(answer))


def sent_again(body: dict[str, Any], patched_pod: dict[str, Any]) -> dict[str, Any]:
    again = copy.deepcopy(body)
    again["request"]["object"] = patched_pod
    again["request"]["uid"] += "-again"
    return again


def preferred_terms(patched_pod: dict[str, Any]) -> list[dict[str, Any]]:
    return patched_pod["spec"].get("affinity", {}).get("nodeAffinity", {}).get(PREFERRED, [])


async def test_mutate_placement_adds_one_preferred_term_and_no_second_one_on_reinvocation(served):
    body = review(fixture(KIND))
    status, answer = await served.post("/mutate-placement", body)
    assert status == 200 and answer["response"]["uid"] == body["request"]["uid"]
    result = applied(body, answer)
    expression = {"key": ROOM_CPU, "operator": "Gt", "values": ["199"]}  # its cpu limit is 0.2
    assert preferred_terms(result) == [{"weight": 60, "preference": {"matchExpressions": [expression]}}]
    # Only the hint: the pod's limits and scheduler are this route's neighbours' business.
    original = body["request"]["object"]
    assert result["spec"]["containers"] == original["spec"]["containers"]
    assert result["spec"]["schedulerName"] == "default-scheduler"
    note = json.loads(result["metadata"]["annotations"][HINT_ANNOTATION])
    assert (note["resources"], note["weight"]) == (["cpu"], 60)
    assert served.hints_counted("given", "Gt") == 1

    for route in ("/mutate-placement", "/mutate"):  # reinvoked with the pod as it was left
        status, second = await served.post(route, sent_again(body, result))
        assert status == 200 and "patch" not in second["response"], route
    assert served.hints_counted("skipped", "unchanged") == 2


async def test_a_defaulted_pod_gets_its_hint_on_reinvocation(served):
    """A best-effort pod has no limits to place by until the defaults entry gives it some: the
    placement entry, called first, adds nothing; reinvoked after the defaults, it hints."""
    body = fixture(GKE)  # a whole AdmissionReview
    _, first = await served.post("/mutate-placement", body)
    assert "patch" not in first["response"]
    status, answer = await served.post("/mutate-defaults", body)
    assert status == 200
    defaulted = applied(body, answer)
    assert all(c["resources"]["limits"]["cpu"] == "500m" for c in defaulted["spec"]["containers"])
    assert "affinity" not in defaulted["spec"] and HINT_ANNOTATION not in defaulted["metadata"].get(
        "annotations", {}
    )
    assert defaulted["spec"]["schedulerName"] == "default-scheduler"
    _, hinted = await served.post("/mutate-placement", sent_again(body, defaulted))
    result = applied(sent_again(body, defaulted), hinted)
    assert len(preferred_terms(result)) == 1
    assert result["spec"]["containers"] == defaulted["spec"]["containers"]


async def test_mutate_scheduler_only_names_the_scheduler(served):
    body = review(fixture(KIND))
    body["request"]["namespace"] = body["request"]["object"]["metadata"]["namespace"] = "sched"
    status, answer = await served.post("/mutate-scheduler", body)
    assert status == 200
    assert operations(answer) == [{"op": "add", "path": "/spec/schedulerName", "value": OURS}]
    moved = applied(body, answer)
    assert moved["spec"]["schedulerName"] == OURS and "affinity" not in moved["spec"]
    # Placed exactly by our scheduler from now on: the placement entry, called after, adds nothing.
    _, after = await served.post("/mutate-placement", sent_again(body, moved))
    assert "patch" not in after["response"]
    assert served.hints_counted("skipped", "other-scheduler") == 1


async def test_callers_not_admitted_get_401_on_each_route_and_change_nothing(served):
    body = review(fixture(KIND))
    for route in (*NEW_ROUTES, "/mutate"):
        for stranger in served.strangers:
            status, answer = await served.post(route, body, stranger)
            assert status == 401, (route, answer)
    assert served.hints_counted("given", "Gt") == 0
    for route in NEW_ROUTES:
        status, _ = await served.post(route, body)
        assert status == 200, route
    assert served.hints_counted("given", "Gt") == 1
