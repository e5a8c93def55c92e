"""Answers remembered by pod shape: exact for every pod of the shape, and never for a shape sent to
fill memory (a selector or limits map as large as the body)."""

import orjson

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.core import limitaware, podlimits
from limitguard.core.config import Enforcement, UnboundPolicy
from limitguard.core.memokeys import MAX_KEPT_KEY_SIZE
from limitguard.core.response import MAX_MESSAGE_LENGTH
from limitguard.state import scan
from limitguard.testing.examples import config, worked_example
from tests.support import binding, container, node, pod, pod_create

HUGE = MAX_KEPT_KEY_SIZE  # entries: far past the limit whatever each one measures


def ask(validator, body: dict):
    return validator(decode_review(orjson.dumps(body)))


def fresh(state, settings, body: dict):
    """The answer of a validator that remembers nothing yet."""
    return ask(Validator(state, settings), body)


def test_pods_of_one_shape_get_their_own_names_in_the_remembered_verdict():
    state, settings = worked_example(), config(unbound_pods=UnboundPolicy.DENY)
    validator = Validator(state, settings)
    first = ask(validator, pod_create(pod("web-1", cpu="6")))
    second = ask(validator, pod_create(pod("web-2", cpu="6")))
    assert not first.allowed and first.message.startswith("pod default/web-1 fits no eligible node")
    assert second == fresh(state, settings, pod_create(pod("web-2", cpu="6")))
    assert second.message == first.message.replace("web-1", "web-2", 1)


def test_a_name_that_makes_the_message_too_long_is_clipped_as_a_fresh_answer_is():
    state, settings = worked_example(), config(unbound_pods=UnboundPolicy.DENY)
    validator = Validator(state, settings)
    ask(validator, pod_create(pod("short", cpu="6")))
    long_name = "n" * MAX_MESSAGE_LENGTH
    remembered = ask(validator, pod_create(pod(long_name, cpu="6")))
    assert remembered == fresh(state, settings, pod_create(pod(long_name, cpu="6")))
    assert len(remembered.message) <= MAX_MESSAGE_LENGTH and "more characters" in remembered.message


def test_a_change_of_the_node_table_is_seen_by_the_next_pod():
    state, settings = worked_example(), config(unbound_pods=UnboundPolicy.DENY)
    validator = Validator(state, settings)
    assert not ask(validator, pod_create(pod("web-1", cpu="6"))).allowed
    state.upsert_node(node("node3", cpu="8"))
    assert ask(validator, pod_create(pod("web-2", cpu="6"))).reason == "fits"


def test_a_binding_held_in_the_ledger_is_seen_by_the_next_pod():
    state, settings = worked_example(), config(unbound_pods=UnboundPolicy.DENY)
    validator = Validator(state, settings)
    assert ask(validator, pod_create(pod("web-1", cpu="5"))).reason == "fits"  # node2: 5 of 10 left
    state.upsert_pod(pod("other", cpu="1", phase="Pending"))
    assert ask(validator, binding("other", "node2")).allowed  # node2 holds 1 more: 4 left
    assert not ask(validator, pod_create(pod("web-2", cpu="5"))).allowed


def test_exempt_pods_and_namespaces_of_their_own_get_their_own_verdicts():
    state = worked_example()
    settings = config(unbound_pods=UnboundPolicy.DENY, namespace_enforcement={"canary": Enforcement.DRY_RUN})
    validator = Validator(state, settings)
    assert not ask(validator, pod_create(pod("web-1", cpu="6"))).allowed
    daemon = ask(validator, pod_create(pod("ds-1", cpu="6", owner_kind="DaemonSet")))
    assert daemon.allowed and daemon.reason == "exempt-daemonset"
    canary = ask(validator, pod_create(pod("web-1", cpu="6", namespace="canary")))
    assert canary.allowed and canary.action == "dryrun" and canary.message.startswith("pod canary/web-1")
    assert not ask(validator, pod_create(pod("web-2", cpu="6"))).allowed


def test_the_remembered_verdicts_are_bounded():
    state, settings = worked_example(), config(unbound_pods=UnboundPolicy.DENY)
    validator = Validator(state, settings)
    for index in range(scan.VERDICTS_KEPT + 3):
        selector = {"team": f"t{index}"}  # a shape each, no node matches
        assert ask(validator, pod_create(pod(f"p{index}", cpu="6", nodeSelector=selector))).allowed
        assert len(validator._unbound._kept) <= scan.VERDICTS_KEPT


def big_selector_pod(name: str) -> dict:
    return pod(name, cpu="6", nodeSelector={f"{name}-{index}": "v" for index in range(HUGE)})


def test_a_selector_as_large_as_a_body_is_answered_and_kept_nowhere():
    state, settings = worked_example(), config(unbound_pods=UnboundPolicy.DENY)
    validator = Validator(state, settings)
    for name in ("a", "b"):
        assert ask(validator, pod_create(big_selector_pod(name))).reason == "no-eligible-node"
    assert not validator._unbound._kept
    assert not state.node_table().layout_memo


def test_limits_as_large_as_a_body_are_answered_and_kept_nowhere():
    state, settings = worked_example(), config(unbound_pods=UnboundPolicy.DENY)
    validator = Validator(state, settings)
    limitaware.NO_ROOM_TEXTS.clear()
    podlimits._AMOUNTS.clear()
    for name in ("a", "b"):
        limits = {"cpu": "6", **{f"example.com/{name}-{index}": "1" for index in range(HUGE)}}
        answer = ask(validator, pod_create(pod(name, containers=[container(limits=limits)])))
        assert not answer.allowed
    assert not podlimits._AMOUNTS
    assert len(limitaware.NO_ROOM_TEXTS) == 0
    assert not validator._unbound._kept
    assert ask(validator, pod_create(pod("small", cpu="6"))).message.startswith("pod default/small")
    assert len(podlimits._AMOUNTS) == 1 and len(limitaware.NO_ROOM_TEXTS) == 1


def test_the_mutator_keeps_no_shape_as_large_as_a_body():
    mutator = Mutator(worked_example(), config(), hints=False)
    requests = {f"example.com/r-{index}": "1" for index in range(HUGE)}
    big = pod("big", containers=[container(requests=requests)])
    ask(mutator, pod_create(big))
    assert not mutator._answers
    ask(mutator, pod_create(pod("best-effort", containers=[container()])))
    assert len(mutator._answers) == 1


def test_many_distinct_shapes_each_small_enough_to_keep_hold_no_more_than_the_byte_budget():
    """Every shape under the per-key bound, as many as the entry bound allows: 4,096 of ~7 KiB
    would have been ~30 MiB; the byte budget holds the memo to 4 MiB."""
    mutator = Mutator(worked_example(), config(), hints=False)
    for index in range(1_200):
        requests = {f"example.com/s{index}-{resource}": "1" for resource in range(30)}
        ask(mutator, pod_create(pod(f"p{index}", containers=[container(requests=requests)])))
        assert mutator._answers.bytes <= mutator._answers.max_bytes == 4 << 20
    assert mutator._answers.evictions > 0
    assert 0 < len(mutator._answers) < 1_200
