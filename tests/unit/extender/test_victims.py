"""ExtenderPreemptionArgs decoded in either form, ExtenderPreemptionResult encoded."""

import orjson

from limitguard.extender.victims import NodeVictims, decode_preemption_args, encode_preemption_result


def test_a_node_in_both_maps_is_read_from_the_meta_victims() -> None:
    whole = {"metadata": {"uid": "u-whole", "namespace": "ns", "name": "p"}}
    args = decode_preemption_args(
        orjson.dumps(
            {
                "Pod": {},
                "NodeNameToVictims": {
                    "n1": {"Pods": [whole]},
                    "n2": {"Pods": [whole], "NumPDBViolations": 1},
                },
                "NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "u-meta"}]}},
            }
        )
    )
    assert args.victims == {
        "n1": NodeVictims(("u-meta",), 0),
        "n2": NodeVictims(("u-whole",), 1, (("ns", "p"),)),
    }


def test_null_and_missing_victims_read_as_none() -> None:
    args = decode_preemption_args(
        orjson.dumps({"Pod": {}, "NodeNameToMetaVictims": {"n1": None, "n2": {"Pods": None}, "n3": {}}})
    )
    assert {node: found.uids for node, found in args.victims.items()} == {"n1": (), "n2": (), "n3": ()}
    assert decode_preemption_args(orjson.dumps({"Pod": {}})).victims == {}


def test_the_result_carries_uids_and_violations_only() -> None:
    encoded = encode_preemption_result({"n1": NodeVictims(("a", "b"), 2, (("ns", "a"), ("ns", "b")))})
    assert orjson.loads(encoded) == {
        "nodeNameToMetaVictims": {"n1": {"pods": [{"uid": "a"}, {"uid": "b"}], "numPDBViolations": 2}}
    }
