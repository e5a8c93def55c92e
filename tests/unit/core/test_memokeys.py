"""What a memo key made from a request is measured at, and where keeping one stops."""

from limitguard.core.eligibility import Placement, Requirement, Toleration
from limitguard.core.memokeys import MAX_KEPT_KEY_SIZE, OBJECT_SIZE, key_size


def small_key(key: object, limit: int = MAX_KEPT_KEY_SIZE) -> bool:
    """Whether a memo would keep *key* under *limit* (core.memo.Memo measures with key_size)."""
    return key_size(key, limit) is not None


def size_of(key: object) -> int:
    """The smallest limit small_key accepts *key* under."""
    low, high = 0, 1 << 30
    while low < high:
        middle = (low + high) // 2
        if small_key(key, middle):
            high = middle
        else:
            low = middle + 1
    return low


def test_strings_count_their_characters_and_every_object_its_overhead():
    assert size_of("abc") == OBJECT_SIZE + 3
    assert size_of(("ab", 7, None)) == 4 * OBJECT_SIZE + 2
    assert size_of(frozenset({"x", "yz"})) == 3 * OBJECT_SIZE + 3
    assert size_of((("a",), (("b",),))) == 6 * OBJECT_SIZE + 2


def test_slotted_records_and_named_tuples_count_their_fields():
    requirement = Requirement("zone", "In", frozenset({"a", "b"}), False)
    # the record, its key and operator, the frozenset and its two values, on_field and bound
    assert size_of(requirement) == 8 * OBJECT_SIZE + len("zone") + len("In") + 2
    toleration = Toleration("k", "Exists", "", "NoSchedule")
    assert size_of(toleration) == 5 * OBJECT_SIZE + len("k") + len("Exists") + len("NoSchedule")


def test_a_real_pods_shape_is_kept_and_one_as_large_as_a_body_is_not():
    real = Placement(
        {
            "nodeSelector": {"topology.kubernetes.io/zone": "eu-west-1a"},
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
            ],
        }
    )
    assert small_key(real.key)
    huge = Placement({"nodeSelector": {f"label-{index}": "v" for index in range(MAX_KEPT_KEY_SIZE)}})
    assert not small_key(huge.key)
    assert not small_key(("x" * MAX_KEPT_KEY_SIZE,))  # one long string is as large


def test_the_limit_is_inclusive():
    key = ("abc", 1)
    assert small_key(key, size_of(key))
    assert not small_key(key, size_of(key) - 1)
