"""The binding ledger: a retried binding counts once; entries the apiserver never wrote are released.

kube-scheduler 1.37 retries a binding after a transient error (kubernetes/kubernetes PR #138855,
pkg/scheduler/schedule_one.go, the bind retry): the same pod uid to the same node arrives again,
possibly after the first attempt was already approved and held here.
"""

from __future__ import annotations

import orjson

from limitguard.admission.review import decode_review
from limitguard.admission.validating import Validator
from limitguard.state.ledger import CALLER, BindingLedger
from limitguard.testing.clock import FakeClock
from limitguard.testing.examples import config, worked_example
from tests.support import binding, node, pod


def ask(validator: Validator, body: dict):
    return validator(decode_review(orjson.dumps(body)))


def test_a_retried_binding_is_judged_as_the_first_was_and_counted_once():
    state = worked_example()  # node2: 5 of 10 cpu; pod5 (4 cpu) pending
    validator = Validator(state, config())
    first = ask(validator, binding("pod5", "node2", uid="try-1"))
    retry = ask(validator, binding("pod5", "node2", uid="try-2"))  # 5 + 4 + 4 = 13 > 10 if counted twice
    assert first.allowed and retry.allowed
    assert len(state.ledger) == 1
    assert state.allocated("node2")["cpu"] == 9000


def test_a_retry_after_the_node_filled_up_meanwhile_still_passes_and_the_node_stays_exact():
    state = worked_example()
    state.upsert_pod(pod("pod6", cpu="1", phase="Pending"))
    validator = Validator(state, config())
    assert ask(validator, binding("pod5", "node2")).allowed  # 9 of 10
    assert ask(validator, binding("pod6", "node2")).allowed  # 10 of 10
    assert ask(validator, binding("pod5", "node2")).allowed  # its own 4 left out: 6 + 4 = 10
    assert state.allocated("node2")["cpu"] == 10000
    assert not ask(validator, binding("pod6", "node1")).allowed  # another node: not the same binding


def test_a_binding_held_on_one_node_does_not_excuse_a_binding_to_another():
    state = worked_example()
    state.upsert_node(node("node3", cpu="4"))  # capacity 5 at 125%
    validator = Validator(state, config())
    assert ask(validator, binding("pod5", "node3")).allowed  # 4 of 5
    state.upsert_pod(pod("pod6", cpu="2", phase="Pending"))
    assert not ask(validator, binding("pod6", "node3")).allowed  # 4 held + 2 > 5


def test_a_binding_for_a_pod_the_cache_shows_bound_elsewhere_holds_no_room():
    state = worked_example()
    state.upsert_node(node("node3"))
    validator = Validator(state, config())
    response = ask(validator, binding("pod3", "node3"))  # pod3 runs on node2: the apiserver refuses it
    assert response.allowed
    assert len(state.ledger) == 0
    assert state.allocated("node3") == {}


def _ledger() -> tuple[BindingLedger, FakeClock]:
    clock = FakeClock()
    return BindingLedger(ttl_seconds=60.0, clock=clock), clock


def test_entries_past_the_write_horizon_are_fenced_and_released_once_the_watch_passes_the_fence():
    ledger, clock = _ledger()
    token = CALLER.set("10.0.0.7:41000")
    try:
        ledger.reserve("node1", "ns/forged", {"cpu": 100_000_000})
    finally:
        CALLER.reset(token)
    clock.advance(4.0)
    ledger.reserve("node1", "ns/late", {"cpu": 1000})
    clock.advance(6.0)  # the first is 10 s old, the second 6 s
    cutoff = clock.now() - 10.0
    assert ledger.awaiting_fence(cutoff)
    assert ledger.fence(cutoff, 500) == 1  # only the first is past the horizon
    assert not ledger.awaiting_fence(cutoff)
    assert ledger.lowest_fence() == 500
    assert ledger.release_unwritten(499) == []  # the watch has not reached the fence
    released = ledger.release_unwritten(500)
    assert [(u.pod_key, u.node, u.caller, u.resize) for u in released] == [
        ("ns/forged", "node1", "10.0.0.7:41000", False)
    ]
    assert ledger.totals("node1") == {"cpu": 1000}
    assert ledger.lowest_fence() is None


def test_a_seen_binding_is_gone_before_its_fence_and_a_retry_starts_a_new_horizon():
    ledger, clock = _ledger()
    ledger.reserve("node1", "ns/real", {"cpu": 1000})
    ledger.reserve("node1", "ns/retried", {"cpu": 2000})
    clock.advance(10.0)
    ledger.fence(clock.now() - 10.0, 40)
    ledger.seen("ns/real", {"cpu": 1000})  # the watch showed it bound: written, released as usual
    ledger.reserve("node1", "ns/retried", {"cpu": 2000})  # sent again: a write may still come
    assert ledger.release_unwritten(10_000) == []
    assert ledger.totals("node1") == {"cpu": 2000}


def test_a_resize_hold_the_apiserver_never_wrote_goes_too():
    ledger, clock = _ledger()
    ledger.reserve("node1", "ns/p", {"cpu": 500}, settles_at={"cpu": 1500})
    ledger.seen("ns/p", {"cpu": 1000})  # the watch still counts the old limits
    clock.advance(11.0)
    ledger.fence(clock.now() - 10.0, 7)
    assert [u.resize for u in ledger.release_unwritten(7)] == [True]
    assert len(ledger) == 0


def test_a_consistent_read_of_the_node_releases_only_the_pods_it_does_not_list():
    ledger, clock = _ledger()
    ledger.reserve("node1", "ns/written", {"cpu": 1})
    ledger.reserve("node1", "ns/never", {"cpu": 2})
    ledger.reserve("node2", "ns/other-node", {"cpu": 4})
    clock.advance(10.0)
    ledger.fence(clock.now(), 90)
    clock.advance(3.0)
    ledger.reserve("node1", "ns/new", {"cpu": 8})  # not fenced: never judged by an older read
    pending = ledger.fenced_before(clock.now())
    assert pending == {"node1": ["ns/written", "ns/never"], "node2": ["ns/other-node"]}
    released = ledger.release_absent("node1", pending["node1"], {"ns/written"}, fence=95)
    assert [u.pod_key for u in released] == ["ns/never"]
    assert ledger.release_absent("node2", pending["node2"], set(), fence=89) == []  # read older than fence
    assert ledger.totals("node1") == {"cpu": 9}
    assert ledger.totals("node2") == {"cpu": 4}


def test_the_same_hold_again_expires_last_and_leaves_the_totals_alone():
    changed: list[str] = []
    clock = FakeClock()
    ledger = BindingLedger(30.0, clock, on_change=changed.append)
    ledger.reserve("node1", "ns/a", {"cpu": 1000})
    ledger.reserve("node1", "ns/b", {"cpu": 2000})
    clock.advance(20.0)
    ledger.reserve("node1", "ns/a", {"cpu": 1000})  # retried: its hold starts again
    assert changed == ["node1", "node1"]  # the totals did not change, so the table is not told
    assert ledger.totals("node1") == {"cpu": 3000}
    clock.advance(15.0)  # b's 30 s are up, a's new ones are not
    assert ledger.expire() == 1
    assert ledger.totals("node1") == {"cpu": 1000}
    ledger.reserve("node2", "ns/a", {"cpu": 1000})  # the same pod elsewhere: moved, both nodes told
    ledger.reserve("node2", "ns/a", {"cpu": 1500})  # other limits: counted anew
    assert changed[2:] == ["node1", "node1", "node2", "node2", "node2"]
    assert ledger.totals("node1") == {} and ledger.totals("node2") == {"cpu": 1500}
