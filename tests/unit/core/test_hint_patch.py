"""core.hints on its own: hint_patch refuses every malformed member (never an AttributeError), and
the requirements at their edges."""

from __future__ import annotations

import hashlib
import json

import orjson
import pytest

from limitguard.core.defaults import NotAPod
from limitguard.core.hints import (
    PREFERRED,
    digest_of,
    hint_annotation,
    hint_patch,
    preferred_term,
    requirements,
    term_digest,
)

TERM = preferred_term([("cpu", 999)], 100)
EVERY_LABEL = frozenset(
    {
        "limitguard.io/limit-room-cpu",
        "limitguard.io/limit-room-memory",
        "limitguard.io/limit-room-nvidia.com_gpu",
    }
)


@pytest.mark.parametrize(
    "pod",
    [
        {"spec": []},
        {"spec": {}, "metadata": []},
        {"spec": {}, "metadata": {"annotations": []}},
        {"spec": {"affinity": [1]}},
        {"spec": {"affinity": "x"}},
        {"spec": {"affinity": {"nodeAffinity": [1]}}},
        {"spec": {"affinity": {"nodeAffinity": {PREFERRED: {"a": 1}}}}},
        {"spec": {"affinity": {"nodeAffinity": {PREFERRED: 3}}}},
    ],
)
def test_a_malformed_member_is_refused(pod):
    with pytest.raises(NotAPod):
        hint_patch(pod, TERM, "{}")


def test_null_members_are_added_over():
    ops = hint_patch({"spec": {"affinity": {"nodeAffinity": None}}, "metadata": None}, TERM, "{}")
    assert [op["path"] for op in ops] == ["/spec/affinity/nodeAffinity", "/metadata"]


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ({"cpu": 1}, [("cpu", 0)]),  # 1m: any node with a millicore left
        ({"cpu": 2000}, [("cpu", 1999)]),  # an exact multiple: a node with 2000 left matches
        ({"memory": 1}, [("memory", 0)]),  # one byte needs a whole MiB of room
        ({"memory": 2**30}, [("memory", 1023)]),  # 1Gi = 1024 MiB exactly
        ({"memory": 2**30 + 1}, [("memory", 1024)]),  # a byte more: one MiB more
        (
            {"cpu": 500, "memory": 2**29, "nvidia.com/gpu": 2},
            [("cpu", 499), ("memory", 511), ("nvidia.com/gpu", 1)],
        ),
        ({"cpu": 0, "memory": 2**20}, [("memory", 0)]),  # a 0 limit asks for nothing
        ({"cpu": 0}, "no-limits"),
        ({}, "no-limits"),
        ({"ephemeral-storage": 2**30}, "no-room-labels"),  # no node carries that label
        ({"cpu": 2**63}, "out-of-range"),  # it would need Gt 2^63 - 1, which matches nothing
        ({"cpu": 2**63 - 1}, [("cpu", 2**63 - 2)]),  # the largest value that still matches unchecked nodes
        ({"memory": 2**90}, "out-of-range"),  # past int64 whatever the unit
    ],
)
def test_the_requirements_at_their_edges(limits, expected):
    assert requirements(limits, EVERY_LABEL.__contains__) == expected


def test_a_resource_without_labels_is_left_out_not_required():
    assert requirements({"cpu": 1000, "memory": 2**30}, {"limitguard.io/limit-room-cpu"}.__contains__) == [
        ("cpu", 999)
    ]


def test_the_term_is_one_term_with_a_gt_per_resource_whose_values_parse_as_int64():
    term = preferred_term([("cpu", 499), ("memory", 2**63 - 2)], 30)
    assert term == {
        "weight": 30,
        "preference": {
            "matchExpressions": [
                {"key": "limitguard.io/limit-room-cpu", "operator": "Gt", "values": ["499"]},
                {"key": "limitguard.io/limit-room-memory", "operator": "Gt", "values": [str(2**63 - 2)]},
            ]
        },
    }
    for expression in term["preference"]["matchExpressions"]:
        (value,) = expression["values"]
        assert value.isdigit() and len(value) <= 63 and 0 <= int(value) < 2**63


def test_the_digest_is_of_the_canonical_bytes_and_orjsons_are_the_same():
    """A reinvocation finds our term by the digest of json.dumps(sort_keys) of it; the webhook
    encodes its own term with orjson: the same bytes."""
    term = preferred_term([("cpu", 1999), ("nvidia.com/gpu", 0)], 100)
    text = json.dumps(term, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert term_digest(term) == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert orjson.dumps(term, option=orjson.OPT_SORT_KEYS) == text.encode()
    annotation = hint_annotation(["cpu", "nvidia.com/gpu"], 100, digest_of(text.encode()))
    assert json.loads(annotation) == {
        "resources": ["cpu", "nvidia.com/gpu"],
        "weight": 100,
        "term": term_digest(term),
    }


def test_the_patch_stays_under_a_kibibyte():
    """Five limited, labelled resources at their largest values: the term and the annotation, as
    the webhook adds them to a pod that has neither, stay under 1 KiB whatever the cluster."""
    resources = ["cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "nvidia.com/gpu"]
    found = requirements({resource: 2**62 for resource in resources}, lambda key: True)
    term = preferred_term(found, 100)
    digest = digest_of(orjson.dumps(term, option=orjson.OPT_SORT_KEYS))
    ops = hint_patch({"spec": {}, "metadata": {}}, term, hint_annotation(resources, 100, digest), digest)
    assert len(orjson.dumps(ops)) <= 1024
