"""kube-scheduler's preemption types (k8s.io/kube-scheduler/extender/v1): ExtenderPreemptionArgs
decoded in either form, ExtenderPreemptionResult encoded.

kube-scheduler sends NodeNameToMetaVictims (victims by UID) to a nodeCacheCapable extender and
NodeNameToVictims (whole pods) to the others (pkg/scheduler/extender.go ProcessPreemption), and
reads only NodeNameToMetaVictims back, turning each UID into the pod of that node in its own cache
(convertToVictims: a UID it does not find there fails the preemption).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from limitguard.extender.protocol import CarriesPod, ExtenderProtocolError, go_field


@dataclass(frozen=True, slots=True)
class NodeVictims:
    """The victims kube-scheduler proposes on one node: their UIDs in its order, and, when it sent
    whole pods (NodeNameToVictims), each pod's namespace and name as well."""

    uids: tuple[str, ...]
    num_pdb_violations: int
    names: tuple[tuple[str, str], ...] | None = None  # (namespace, name) per uid; None: by UID only


@dataclass(frozen=True)
class PreemptionArgs(CarriesPod):
    pod: Mapping[str, Any]
    victims: dict[str, NodeVictims]  # node name -> its proposed victims, in the request's order


def _victim_count(value: Any, where: str) -> int:
    """NumPDBViolations: an int64 (absent or null decodes to 0, as encoding/json leaves it)."""
    if value is None:
        return 0
    if type(value) is not int or not -(2**63) <= value < 2**63:
        raise ExtenderProtocolError(f"{where}.NumPDBViolations must be an integer")
    return value


def _victims_of(node: str, value: Any, whole_pods: bool) -> NodeVictims | None:
    """One node's Victims (whole pods) or MetaVictims (UIDs); None for a null entry."""
    where = f"victims of node {node!r}"
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ExtenderProtocolError(f"{where} must be an object with Pods and NumPDBViolations")
    pods = go_field(value, "Pods")
    if pods is None:
        pods = []
    if not isinstance(pods, list):
        raise ExtenderProtocolError(f"{where}: Pods must be a list")
    uids: list[str] = []
    names: list[tuple[str, str]] = []
    for index, pod in enumerate(pods):
        if not isinstance(pod, Mapping):
            raise ExtenderProtocolError(f"{where}: Pods[{index}] must be an object")
        if whole_pods:
            metadata = go_field(pod, "metadata")  # a tagged field still matches in any casing
            metadata = metadata if isinstance(metadata, Mapping) else {}
            uid, namespace, name = (go_field(metadata, key) for key in ("uid", "namespace", "name"))
            if not all(isinstance(part, str) for part in (uid, namespace, name)):
                raise ExtenderProtocolError(f"{where}: Pods[{index}] needs metadata.uid, namespace and name")
            names.append((namespace, name))
        else:
            uid = go_field(pod, "UID")
            if not isinstance(uid, str):
                raise ExtenderProtocolError(f"{where}: Pods[{index}].UID must be a string")
        uids.append(uid)
    count = _victim_count(go_field(value, "NumPDBViolations"), where)
    return NodeVictims(tuple(uids), count, tuple(names) if whole_pods else None)


def _victims_map(document: Mapping[str, Any], name: str, whole_pods: bool) -> dict[str, NodeVictims | None]:
    found = go_field(document, name)
    if found is None:
        return {}
    if not isinstance(found, Mapping):
        raise ExtenderProtocolError(f"ExtenderPreemptionArgs.{name} must be an object keyed by node name")
    return {str(node): _victims_of(str(node), value, whole_pods) for node, value in found.items()}


def decode_preemption_args(body: bytes) -> PreemptionArgs:
    """The ExtenderPreemptionArgs in *body*, in either form: NodeNameToMetaVictims (UIDs, what a
    nodeCacheCapable extender is sent) or NodeNameToVictims (whole pods). Field names in any casing,
    as encoding/json matches them; a node in both maps is read from NodeNameToMetaVictims. A null
    victims entry is kept as no victims (such a node is never answered)."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise ExtenderProtocolError(f"body is not valid JSON: {error}") from None
    if not isinstance(document, Mapping):
        raise ExtenderProtocolError("body must be a JSON object (ExtenderPreemptionArgs)")
    pod = go_field(document, "Pod")
    if not isinstance(pod, Mapping):
        raise ExtenderProtocolError("ExtenderPreemptionArgs.pod must be a Pod object")
    victims = _victims_map(document, "NodeNameToVictims", whole_pods=True)
    victims.update(_victims_map(document, "NodeNameToMetaVictims", whole_pods=False))
    empty = NodeVictims((), 0)
    return PreemptionArgs(pod, {node: found or empty for node, found in victims.items()})


def encode_preemption_result(victims: Mapping[str, NodeVictims]) -> bytes:
    """An ExtenderPreemptionResult: NodeNameToMetaVictims only (kube-scheduler converts the UIDs back
    to its own pods), with the keys of the tagged types, which the untagged ones decode too."""
    return orjson.dumps(
        {
            "nodeNameToMetaVictims": {
                node: {
                    "pods": [{"uid": uid} for uid in found.uids],
                    "numPDBViolations": found.num_pdb_violations,
                }
                for node, found in victims.items()
            }
        }
    )
