"""The leader's limit-room labels and full-node taint, written to the fake apiserver and read back
through the watch: values, what changes them, what does not, and the taint's precondition."""

from __future__ import annotations

import orjson
import pytest

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.cli.configfile import parse_config
from limitguard.core.config import Enforcement, HintMode
from limitguard.core.ratios import RATIO_ANNOTATION
from limitguard.core.roomlabels import FULL_TAINT, INT64_MAX
from limitguard.kube.roomlabels import LABELS, TAINT
from limitguard.kube.writes import Outcome
from limitguard.testing.builders import make_pod, node, pod_create
from tests.integration.kube.helpers import eventually
from tests.integration.kube.room_labels import CPU, MEMORY, config, labelling, populate
from tests.unit.admission.hint_cluster import node_affinity_scores

OTHER = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


async def test_every_node_gets_its_room_rounded_down_held_bindings_included(apiserver, connect):
    populate(apiserver)
    apiserver.apply("pods", make_pod("default", "a", "node-0", cpu_limit="1500m", memory_limit="1537Mi"))
    run = await labelling(apiserver, connect, config())
    run.live.state.ledger.reserve("node-1", "default/held", {"cpu": 4000, "memory": 1})
    assert await run.step() == 3
    assert run.labels("node-0") == {CPU: "2500", MEMORY: "6655"}  # 8192 - 1537 MiB
    assert run.labels("node-1") == {CPU: "0", MEMORY: "8191"}  # one byte held: a MiB less, rounded down
    assert run.labels("node-2") == {CPU: "4000", MEMORY: "8192"}
    assert run.writes.outcomes[(LABELS, Outcome.WRITTEN)] == 3
    assert {content for _, content, _ in apiserver.node_patches} == {"application/merge-patch+json"}
    assert await run.step() == 0  # nothing changed: nothing written


async def test_a_binding_lowers_the_label_first_and_a_node_is_written_once_per_change(apiserver, connect):
    populate(apiserver)
    run = await labelling(apiserver, connect, config())
    ledger = run.live.state.ledger
    ledger.reserve("node-0", "default/p0", {"cpu": 1000})
    await run.step()
    ledger.release("default/p0")  # node-0's room goes up (queued first)...
    await run.caught_up()
    await run.labeller.look()
    ledger.reserve("node-2", "default/p2", {"cpu": 1000})  # ...node-2's down: it is written first
    await run.labeller.look()
    ledger.reserve("node-2", "default/p3", {"cpu": 500})  # and down again while it waits
    await run.labeller.look()
    assert run.writes.queued(LABELS) == 2  # coalesced: one write per node
    written = len(apiserver.node_patches)
    await run.writes.drain()
    await run.caught_up()
    assert [name for name, _, _ in apiserver.node_patches[written:]] == ["node-2", "node-0"]
    assert run.labels("node-2")[CPU] == "2500" and run.labels("node-0")[CPU] == "4000"
    ledger.reserve("node-1", "default/p4", {"cpu": 1000})
    await run.labeller.look()
    ledger.release("default/p4")  # back to what the label says before its turn
    assert await run.step() == 0
    assert run.writes.outcomes[(LABELS, Outcome.UNCHANGED)] == 1


async def test_a_node_just_added_is_labelled_before_the_writes_waiting(apiserver, connect):
    populate(apiserver, nodes=3)
    run = await labelling(apiserver, connect, config())
    await run.step()
    for index in range(3):  # three lowering writes wait...
        run.live.state.ledger.reserve(f"node-{index}", f"default/p{index}", {"cpu": 1000})
    await run.labeller.look()
    apiserver.apply("nodes", node("node-new", cpu="4", memory="8Gi"))  # ...when a node is added
    await run.caught_up()
    await run.labeller.look()
    written = len(apiserver.node_patches)
    await run.writes.drain()
    assert next(name for name, _, _ in apiserver.node_patches[written:]) == "node-new"


async def test_a_new_leader_writes_only_what_differs(apiserver, connect):
    populate(apiserver, nodes=4)
    run = await labelling(apiserver, connect, config())
    await run.step()
    successor = run.relabeller(config())  # another replica's labeller, starting from the watch
    run.labeller = successor
    assert await run.step() == 0
    run.live.state.ledger.reserve("node-3", "default/x", {"cpu": 500})
    assert await run.step() == 1


async def test_relists_write_nothing(apiserver, connect):
    populate(apiserver)
    run = await labelling(apiserver, connect, config())
    await run.step()
    apiserver.compact()
    apiserver.close_watches()  # the reflectors relist
    await run.live.applied("nodes", apiserver.rv)
    assert await run.step() == 0


async def test_nodes_added_are_labelled_and_deleted_ones_are_left(apiserver, connect):
    populate(apiserver, nodes=2)
    run = await labelling(apiserver, connect, config())
    await run.step()
    apiserver.apply("nodes", node("node-9", cpu="2", memory="2Gi"))
    assert await run.step() == 1
    assert run.labels("node-9") == {CPU: "2000", MEMORY: "2048"}
    run.live.state.ledger.reserve("node-1", "default/x", {"cpu": 500})
    await run.labeller.look()
    apiserver.delete("nodes", "node-1")  # gone before its write's turn
    await run.writes.drain()
    assert run.writes.outcomes[(LABELS, Outcome.GONE)] == 1


async def test_annotations_and_pools_change_what_a_node_checks(apiserver, connect):
    populate(apiserver, nodes=2)
    settings = parse_config(
        {
            "apiVersion": "limitguard.io/v1alpha1",
            "kind": "LimitGuardConfiguration",
            "limitAware": {
                "defaultLimitToAllocatableRatio": {"cpu": 100, "memory": 100},
                "nodePools": [
                    {
                        "name": "big",
                        "nodeSelector": {"matchLabels": {"pool": "big"}},
                        "limitToAllocatableRatio": {"cpu": 200},
                    }
                ],
            },
        }
    )
    run = await labelling(apiserver, connect, settings)
    await run.step()

    def changed(
        name: str, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None
    ) -> None:
        built = node(
            name,
            cpu="4",
            memory="8Gi",
            annotations=annotations,
            labels={**run.labels(name), **(labels or {})},
        )
        apiserver.apply("nodes", built)

    changed("node-1", annotations={RATIO_ANNOTATION: '{"cpu": 50}'})  # checks cpu at 50 % only now
    assert await run.step() == 1
    assert run.labels("node-1") == {CPU: "2000", MEMORY: str(INT64_MAX)}
    changed("node-0", labels={"pool": "big"})  # its pool doubles cpu and checks nothing else
    assert await run.step() == 1
    assert run.labels("node-0") == {CPU: "8000", MEMORY: str(INT64_MAX)}


async def test_labels_no_longer_meant_are_removed(apiserver, connect):
    populate(apiserver, nodes=2)
    run = await labelling(apiserver, connect, config())
    await run.step()
    run.labeller = run.relabeller(config(enforcement=Enforcement.WARN))  # Auto: no Deny anywhere now
    assert await run.step() == 2
    assert run.labels("node-0") == {} == run.labels("node-1")
    run.labeller = run.relabeller(config(ratios={"cpu": 100}))  # memory no longer ratio'd
    await run.step()
    assert run.labels("node-0") == {CPU: "4000"}


async def test_with_default_values_nothing_is_written(apiserver, connect):
    """Auto, enforcement Deny, no ratio anywhere: no label (the install-safety promise)."""
    populate(apiserver)
    run = await labelling(apiserver, connect, config(ratios={}))
    assert await run.step() == 0
    run.labeller = run.relabeller(config(mode=HintMode.ALWAYS, enforcement=Enforcement.WARN))
    assert await run.step() == 3  # Always: from the start, whatever the enforcement


async def test_the_hint_as_node_affinity_scores_it_against_the_live_labels(apiserver, connect):
    populate(apiserver)
    apiserver.apply("pods", make_pod("default", "a", "node-0", cpu_limit="3", memory_limit="1Gi"))
    settings = config()
    run = await labelling(apiserver, connect, settings)
    await run.step()
    run.live.state.ledger.reserve("node-1", "default/held", {"cpu": 2500})
    await run.step()
    pod = make_pod("default", "web-1", "", cpu_limit="1500m", memory_limit="1Gi", phase="Pending")
    answer = Mutator(run.live.state, settings, defaults=False)(decode_review(orjson.dumps(pod_create(pod))))
    import jsonpatch

    hinted = jsonpatch.apply_patch(pod, answer.patch.operations())
    labels = {record.name: dict(record.traits.labels) for record in run.live.state.nodes()}
    # node-0 has 1 cpu left, node-1 1.5 (exactly the limit), node-2 4
    assert node_affinity_scores(hinted, labels) == {"node-0": 0, "node-1": 100, "node-2": 100}


# -- the taint --------------------------------------------------------------------------------------
async def test_the_taint_comes_below_the_threshold_and_goes_only_past_the_hysteresis(apiserver, connect):
    populate(apiserver, nodes=1)  # 4 cpu: tainted under 400m left, untainted at 600m
    run = await labelling(apiserver, connect, config(avoid=True))
    ledger = run.live.state.ledger
    await run.step()
    assert run.taints("node-0") == []
    ledger.reserve("node-0", "default/a", {"cpu": 3700})  # 300m left
    await run.step()
    assert run.taints("node-0") == [FULL_TAINT]
    ledger.reserve("node-0", "default/a", {"cpu": 3500})  # 500m: under 15 %, stays
    await run.step()
    assert run.taints("node-0") == [FULL_TAINT]
    ledger.reserve("node-0", "default/a", {"cpu": 3400})  # 600m: 15 %, removed
    await run.step()
    assert run.taints("node-0") == []
    assert run.writes.outcomes[(TAINT, Outcome.WRITTEN)] == 2


async def test_a_taint_another_writer_adds_meanwhile_survives(apiserver, connect):
    """The labeller reads the node, another writer adds its taint, the labeller's patch carries the
    version it read: 409, read again, and the list it writes keeps the other taint."""
    populate(apiserver, nodes=1)
    run = await labelling(apiserver, connect, config(avoid=True))
    await run.step()
    nodes = run.labeller.nodes
    read = nodes.get
    raced = []

    async def get_then_race(name, *, from_cache=False):
        found = await read(name, from_cache=from_cache)
        if not raced:
            raced.append(name)
            stored = orjson.loads(apiserver.objects["nodes"][name].body)
            stored.setdefault("spec", {})["taints"] = [OTHER]
            apiserver.apply("nodes", stored)  # the other writer's update lands between read and patch
        return found

    nodes.get = get_then_race
    run.live.state.ledger.reserve("node-0", "default/a", {"cpu": 3900})
    await run.step()
    assert run.taints("node-0") == [OTHER, FULL_TAINT]
    conflicts = [content for _, content, _ in apiserver.node_patches if "strategic" in content]
    assert len(conflicts) == 1  # the refused patch is not taken; the second is


async def test_the_taint_is_removed_when_avoid_full_nodes_is_turned_off(apiserver, connect):
    populate(apiserver, nodes=1)
    run = await labelling(apiserver, connect, config(avoid=True))
    run.live.state.ledger.reserve("node-0", "default/a", {"cpu": 4000})
    await run.step()
    assert run.taints("node-0") == [FULL_TAINT]
    run.labeller = run.relabeller(config(avoid=False))
    await run.step()
    assert run.taints("node-0") == []


@pytest.mark.parametrize("status", [403, 500])
async def test_a_refused_write_is_retried_later(apiserver, connect, status):
    populate(apiserver, nodes=1)
    run = await labelling(apiserver, connect, config())
    apiserver.fail_next("node-writes", 1, status)
    await run.labeller.look()
    await run.writes.drain()
    assert run.writes.outcomes[(LABELS, Outcome.FAILED)] == 1
    run.live.clock.advance(10)  # past the retry delay
    assert run.labeller.stalest_seconds() >= 10  # the metric: that node has waited since
    await eventually(lambda: run.writes.queued(LABELS) == 1, "the retry queued again")
    await run.writes.drain()
    await run.caught_up()
    assert run.labels("node-0")[CPU] == "4000"
    assert run.labeller.stalest_seconds() == 0


async def test_writes_never_pass_the_configured_rate(apiserver, connect):
    populate(apiserver, nodes=10)
    run = await labelling(apiserver, connect, config(), max_per_second=2.0, burst=3)
    times: list[float] = []
    patch = run.labeller.nodes.patch

    async def timed(name, body, patch_type):
        times.append(run.live.clock.now())
        return await patch(name, body, patch_type)

    run.labeller.nodes.patch = timed
    assert await run.step() == 10
    for index, at in enumerate(times):
        assert index + 1 <= 3 + 2.0 * (at - times[0]) + 1e-9  # burst, then 2 a second
    assert times[-1] - times[0] >= (10 - 3) / 2.0 - 1e-9
    assert run.writes.deferred[LABELS] == 7


async def test_a_label_someone_else_changes_is_corrected_by_the_resync(apiserver, connect):
    from limitguard.kube.roomlabels import RESYNC_SECONDS

    populate(apiserver, nodes=2)
    run = await labelling(apiserver, connect, config())
    await run.step()
    stored = orjson.loads(apiserver.objects["nodes"]["node-0"].body)
    stored["metadata"]["labels"][CPU] = "99999"  # someone else's write
    apiserver.apply("nodes", stored)
    run.labeller._sent["node-0"] = (run.labels("node-0") | {CPU: "4000"}, run.live.clock.now())
    assert await run.step() == 0  # our own write still stands for the label: nothing seen wrong
    run.live.clock.advance(RESYNC_SECONDS)
    assert await run.step() == 1  # the full comparison finds it
    assert run.labels("node-0")[CPU] == "4000"
