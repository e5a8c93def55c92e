import pytest

from limitguard.core.eligibility import NodeTraits, Placement, Taint
from limitguard.core.podlimits import PodSpecError
from tests.support import APISERVER_TOLERATIONS

LINUX_A = NodeTraits("node-a", {"kubernetes.io/os": "linux", "zone": "a", "gen": "5"})
LINUX_B = NodeTraits("node-b", {"kubernetes.io/os": "linux", "zone": "b", "gen": "3"})


def affinity(*terms):
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
            }
        }
    }


def expr(key, operator, *values):
    item = {"key": key, "operator": operator}
    if values:
        item["values"] = list(values)
    return item


def test_no_constraints_admit_every_plain_node():
    assert Placement({}).rejection(LINUX_A) is None


def test_node_selector_must_match_every_label():
    placement = Placement({"nodeSelector": {"zone": "a", "kubernetes.io/os": "linux"}})
    assert placement.rejection(LINUX_A) is None
    assert "zone=a" in placement.rejection(LINUX_B)


@pytest.mark.parametrize(
    ("requirement", "admits_a", "admits_b"),
    [
        (expr("zone", "In", "a", "c"), True, False),
        (expr("zone", "NotIn", "a"), False, True),
        (expr("gpu", "NotIn", "yes"), True, True),  # absent label satisfies NotIn
        (expr("zone", "Exists"), True, True),
        (expr("gpu", "DoesNotExist"), True, True),
        (expr("zone", "DoesNotExist"), False, False),
        (expr("gen", "Gt", "4"), True, False),
        (expr("gen", "Lt", "4"), False, True),
        (expr("zone", "Gt", "1"), False, False),  # non-integer label never matches Gt
    ],
)
def test_match_expressions(requirement, admits_a, admits_b):
    placement = Placement(affinity({"matchExpressions": [requirement]}))
    assert (placement.rejection(LINUX_A) is None) == admits_a
    assert (placement.rejection(LINUX_B) is None) == admits_b


def test_match_fields_on_metadata_name():
    placement = Placement(affinity({"matchFields": [expr("metadata.name", "In", "node-b")]}))
    assert placement.rejection(LINUX_A) is not None
    assert placement.rejection(LINUX_B) is None


def test_terms_are_ored_and_requirements_anded():
    placement = Placement(
        affinity(
            {"matchExpressions": [expr("zone", "In", "a"), expr("gen", "Lt", "4")]},  # nobody
            {"matchExpressions": [expr("zone", "In", "b")]},
        )
    )
    assert placement.rejection(LINUX_A) is not None
    assert placement.rejection(LINUX_B) is None


def test_an_empty_term_selects_nothing():
    assert Placement(affinity({})).rejection(LINUX_A) is not None


def test_taints_need_tolerations():
    tainted = NodeTraits(
        "gpu", {}, (Taint("dedicated", "gpu", "NoSchedule"), Taint("soft", "", "PreferNoSchedule"))
    )
    assert "dedicated:NoSchedule" in Placement({}).rejection(tainted)
    equal = Placement({"tolerations": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]})
    wrong_value = Placement({"tolerations": [{"key": "dedicated", "value": "cpu"}]})
    exists = Placement({"tolerations": [{"key": "dedicated", "operator": "Exists"}]})
    everything = Placement({"tolerations": [{"operator": "Exists"}]})
    wrong_effect = Placement(
        {"tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]}
    )
    assert equal.rejection(tainted) is None
    assert wrong_value.rejection(tainted) is not None
    assert exists.rejection(tainted) is None
    assert everything.rejection(tainted) is None
    assert wrong_effect.rejection(tainted) is not None


def test_no_execute_taints_block_too():
    node = NodeTraits("n", {}, (Taint("node.kubernetes.io/not-ready", "", "NoExecute"),))
    assert Placement({}).rejection(node) is not None


def test_unschedulable_nodes_unless_tolerated():
    cordoned = NodeTraits("n", {}, unschedulable=True)
    assert Placement({}).rejection(cordoned) == "node is unschedulable"
    tolerant = Placement({"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]})
    assert tolerant.rejection(cordoned) is None


@pytest.mark.parametrize(
    "spec",
    [
        {"nodeSelector": ["zone"]},
        {"tolerations": "all"},
        affinity({"matchExpressions": [expr("zone", "Between", "a")]}),
        affinity({"matchExpressions": [expr("gen", "Gt", "x")]}),
        affinity({"matchExpressions": "zone"}),
    ],
)
def test_malformed_constraints_are_reported(spec):
    with pytest.raises(PodSpecError):
        Placement(spec)


def test_a_toleration_that_is_not_an_object_is_named_by_its_index():
    with pytest.raises(PodSpecError, match=r"spec\.tolerations\[1\] is not an object"):
        Placement({"tolerations": [{"operator": "Exists"}, "node.kubernetes.io/not-ready"]})


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ({"nodeSelector": {"zone": ["a"]}}, r"spec\.nodeSelector\.zone"),
        ({"tolerations": [{"operator": "Exists"}, {"key": {"a": 1}}]}, r"spec\.tolerations\[1\]"),
        (affinity({"matchExpressions": [expr("zone", "In", "a", ["b"])]}), r"matchExpressions\[0\]\.values"),
    ],
)
def test_a_list_or_object_where_text_belongs_is_reported(spec, where):
    """Not turned into text: the apiserver refuses such a pod, and the text of a deeply nested
    value exhausts the interpreter's recursion."""
    with pytest.raises(PodSpecError, match=where + " is not a string"):
        Placement(spec)


def test_numbers_where_text_belongs_are_read_as_their_text():
    placement = Placement(
        {"nodeSelector": {"gen": 5}, **affinity({"matchExpressions": [expr("gen", "In", 5)]})}
    )
    assert placement.rejection(LINUX_A) is None
    assert placement.rejection(LINUX_B) is not None


def test_pods_with_equal_tolerations_share_a_placement_key():
    """The layout memo is keyed by it: the two tolerations the apiserver gives every pod. Their
    tolerationSeconds differ here and do not split the key: the scheduler's filter ignores them."""
    shorter = [dict(APISERVER_TOLERATIONS[0]), {**APISERVER_TOLERATIONS[1], "tolerationSeconds": 60}]
    first, second = (
        Placement({"tolerations": list(APISERVER_TOLERATIONS)}),
        Placement({"tolerations": shorter}),
    )
    assert first.key == second.key and hash(first.key) == hash(second.key)
    assert first.key != Placement({"tolerations": shorter[:1]}).key
