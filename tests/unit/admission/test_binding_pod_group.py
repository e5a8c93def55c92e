"""A denied binding of a pod-group member says so: kube-scheduler binds a PodGroup's members one by
one through pods/binding (scheduling.k8s.io PodGroup, pod.spec.schedulingGroup, kubernetes/api
core/v1 types.go at v0.36.0 and v0.37.0-beta.0), so the members bound before it stay bound."""

from __future__ import annotations

import orjson

from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.testing.examples import config, worked_example
from tests.support import binding, pod


def ask(validator: Validator, body: dict):
    return validator(decode_review(orjson.dumps(body)))


def grouped(name: str, cpu: str, group: str | None) -> dict:
    body = pod(name, cpu=cpu, phase="Pending")
    if group is not None:
        body["spec"]["schedulingGroup"] = {"podGroupName": group}
    return body


def test_a_denied_member_names_its_group():
    state = worked_example()  # node1 full
    state.upsert_pod(grouped("worker-1", cpu="4", group="trainer"))
    response = ask(Validator(state, config()), binding("worker-1", "node1"))
    assert not response.allowed
    assert "the pod belongs to pod group trainer, whose members are bound one by one" in response.message


def test_a_pod_without_a_group_and_an_allowed_member_say_nothing_of_groups():
    state = worked_example()
    state.upsert_pod(grouped("solo", cpu="4", group=None))
    state.upsert_pod(grouped("worker-2", cpu="1", group="trainer"))
    validator = Validator(state, config())
    denied = ask(validator, binding("solo", "node1"))
    assert not denied.allowed and "pod group" not in denied.message
    allowed = ask(validator, binding("worker-2", "node2"))  # node2: 5 of 10
    assert allowed.allowed and "pod group" not in (allowed.message or "")
