"""The hint follows the pod rules the state counts under: a change of release (serve hands the state
the cluster's rules at start-up and again when the apiserver reports another) must not leave the
limits of the old rules in use, in the term or in what is remembered of it."""

from __future__ import annotations

import jsonpatch
import orjson

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.podlimits import pod_limits
from limitguard.core.podrules import rules_for
from tests.support import pod_create, resizing_pod
from tests.unit.admission.hint_cluster import cluster, our_expressions, settings

RESIZING = resizing_pod()


def test_the_two_releases_count_the_pod_differently():
    counted = {
        minor: pod_limits(RESIZING["spec"], RESIZING["status"], rules_for(minor)) for minor in (36, 37)
    }
    assert counted == {36: {"cpu": 8000}, 37: {"cpu": 5000}}


def test_a_release_change_gives_the_hint_of_the_new_rules():
    """1.36 counts the resizing pod's 8 cpu, 1.37 its 5: the term asks for room for that."""
    state = cluster(nodes=3, full=("node-0",))
    mutator = Mutator(state, settings())  # one throughout: what it remembers must not outlive a release
    review = orjson.dumps(pod_create(RESIZING))
    hinted: dict[int, list[list[str]]] = {}
    for minor in (36, 37, 36):
        state.use_pod_rules(rules_for(minor))
        answer = mutator(decode_review(review))
        patched = jsonpatch.apply_patch(RESIZING, answer.patch.operations())
        hinted.setdefault(minor, []).append(our_expressions(patched)[0]["values"])
    assert hinted == {36: [["7999"], ["7999"]], 37: [["4999"]]}
