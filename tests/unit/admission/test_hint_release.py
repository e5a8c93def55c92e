"""The hint follows the pod rules the state counts under: the Hinter remembers a pod spec's limits,
and a change of release (serve hands the state the cluster's rules at start-up and again when the
apiserver reports another) must not leave the limits of the old rules in use."""

from __future__ import annotations

import jsonpatch
import orjson

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.podlimits import pod_limits
from limitguard.core.podrules import rules_for
from tests.support import pod, pod_create, resizing_pod
from tests.unit.admission.hint_cluster import cluster, our_expression, settings

RESIZING = resizing_pod()


def test_the_two_releases_count_the_pod_differently():
    counted = {
        minor: pod_limits(RESIZING["spec"], RESIZING["status"], rules_for(minor)) for minor in (36, 37)
    }
    assert counted == {36: {"cpu": 8000}, 37: {"cpu": 5000}}


def test_a_release_change_gives_the_hint_of_the_new_rules():
    """10 cpu of limit capacity a node: node-0 has 1 left, node-1 6, node-2 10. By 1.36's 8 cpu
    only node-2 has room (In it); by 1.37's 5, node-1 too (NotIn node-0)."""
    state = cluster(nodes=3, full=("node-0",))
    state.replace_pods([pod("big", node_name="node-0", cpu="9"), pod("half", node_name="node-1", cpu="4")])
    mutator = Mutator(state, settings())  # one throughout: what it remembers must not outlive a release
    review = orjson.dumps(pod_create(RESIZING))
    hinted: dict[int, list[dict]] = {}
    for minor in (36, 37, 36):
        state.use_pod_rules(rules_for(minor))
        answer = mutator(decode_review(review))
        patched = jsonpatch.apply_patch(RESIZING, answer.patch.operations())
        hinted.setdefault(minor, []).append(our_expression(patched))
    assert hinted[36] == [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-2"]}] * 2
    assert hinted[37] == [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node-0"]}]
