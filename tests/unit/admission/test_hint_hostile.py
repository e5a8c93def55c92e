"""Hostile pods at the placement-hint routes, answered in-process: whatever JSON stands where the
hint reads or patches (affinity as a list, a string or a number; garbage node affinity; thousands
of expressions; nesting as deep as the decoder takes; annotations that are not strings), the
mutator never raises, always allows, and any patch it gives applies to the pod it was given."""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.hints import HINT_ANNOTATION
from tests.strategies import (
    DEEP_PLACES,
    HINT_PATHS,
    SPECIAL_VALUES,
    create_review,
    deep_pod_create,
    hostile_pods,
    replaced_at,
)
from tests.unit.admission.hint_cluster import limited, with_scheduler_namespace

# The routes serve builds: every part, then the one-part routes that add a hint or the scheduler.
ROUTES: dict[str, dict[str, bool]] = {
    "mutate": {},
    "mutate-placement": {"defaults": False, "scheduler": False},
    "mutate-scheduler": {"defaults": False, "hints": False},
}


STATE, CONFIG = with_scheduler_namespace()
MUTATORS = {route: Mutator(STATE, CONFIG, **parts) for route, parts in ROUTES.items()}
HINTED, MOVED = limited("web-1"), limited("web-2", namespace_name="sched")


def answer_and_apply(route: str, body: bytes) -> Any:
    """The property: decoded as the server decodes it, answered without raising, allowed, and the
    patch (if any) applies to the pod sent. Returns the answer."""
    request = decode_review(body)
    answer = MUTATORS[route](request)
    assert answer.allowed
    if answer.patch is not None:
        jsonpatch.apply_patch(request.object, answer.patch.operations(), in_place=True)
    return answer


def test_the_starting_pods_get_a_hint_and_the_scheduler():
    """The properties start from pods that do get a hint (default) and the scheduler (sched)."""
    hinted = answer_and_apply("mutate-placement", create_review(HINTED, "default"))
    assert hinted.reason == "placement-hint"
    moved = answer_and_apply("mutate-scheduler", create_review(MOVED, "sched"))
    assert [op["path"] for op in moved.patch.operations()] == ["/spec/schedulerName"]


@pytest.mark.parametrize("route", ROUTES)
@settings(max_examples=300, database=None)
@given(hinted=hostile_pods(HINTED), moved=hostile_pods(MOVED))
def test_hostile_pods_never_raise_and_are_allowed(route, hinted, moved):
    answer_and_apply(route, create_review(hinted, "default"))
    answer_and_apply(route, create_review(moved, "sched"))


@pytest.mark.parametrize("path", HINT_PATHS, ids="/".join)
def test_each_special_value_at_each_place(path):
    """Every special value at every place, not left to the draw (the placement route only: the
    others are drawn above)."""
    for value in SPECIAL_VALUES:
        answer_and_apply("mutate-placement", create_review(replaced_at(HINTED, path, value), "default"))


@pytest.mark.parametrize("place", DEEP_PLACES)
@pytest.mark.parametrize("route", ["mutate", "mutate-placement"])
def test_nesting_as_deep_as_the_decoder_takes_is_answered(route, place):
    """orjson decodes up to 1,024 levels; the interpreter's own recursion stops near 1,000 (the
    text of a nested list, json.dumps of a preferred term)."""
    body = deep_pod_create(HINTED, place, 1010)
    assert decode_review(body).object  # the server would decode it
    answer_and_apply(route, body)


def test_a_hinted_pod_with_someone_elses_deep_term_gets_ours_beside_it():
    """Hinted before (our annotation is there) and holding another party's deep preferred term:
    the reinvocation adds our term beside it and leaves theirs alone."""
    first = answer_and_apply("mutate-placement", create_review(HINTED, "default"))
    (annotation,) = [op["value"] for op in first.patch.operations() if "annotations" in op["path"]]
    annotated = {**HINTED, "metadata": {**HINTED["metadata"], "annotations": {HINT_ANNOTATION: annotation}}}
    answer = answer_and_apply("mutate-placement", deep_pod_create(annotated, "preferred", 1010))
    assert answer.reason == "placement-hint"
    assert answer.patch.operations()[0]["path"].endswith("/preferredDuringSchedulingIgnoredDuringExecution/-")
