"""PATCH of a Node as kube-apiserver applies it: the three patch types, then its checks (pure data).

What is reproduced (k8s.io/apiserver `pkg/endpoints/handlers/patch.go`, apimachinery
`pkg/util/strategicpatch`, kubernetes `pkg/apis/core/validation` ValidateNode, `pkg/registry/core/node`
strategy):

- `application/json-patch+json` (RFC 6902): a body that is not a list of operations is 400; an
  operation that fails (a `test` that does not hold, a path that is missing) is 422.
- `application/merge-patch+json` (RFC 7386): objects merged, `null` deletes, anything else replaced.
- `application/strategic-merge-patch+json`: as a merge patch, except the Node's lists that have a
  merge key (`metadata.ownerReferences` by uid, `status.conditions` and `status.addresses` by type,
  `status.volumesAttached` by name) are merged item by item, and `metadata.finalizers` and
  `spec.podCIDRs` as sets; every other list, `spec.taints` among them, is replaced whole. Directives:
  `$patch: replace | delete | merge` on a map or a merge-keyed item, `$deleteFromPrimitiveList/<field>`,
  `$setElementOrder/<field>` (accepted; the merged order is kept). Any other `$` key is 400.
- Any other content type (server-side apply among them) is 415.
- After the patch: a `metadata.resourceVersion` that is set and differs from the stored one is 409
  Conflict ("the object has been modified"), as a `uid` that differs; a name that differs from the
  URL's is 400; labels, taints and their effects are validated (422 Invalid, every problem named);
  `status` is kept as it was (a write to the main resource never changes it).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import jsonpatch
import orjson

from limitguard.core.names import is_label_value, is_qualified_name
from limitguard.errors import LimitguardError

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# A Node's lists with a patch merge key (k8s.io/api core/v1 types.go `patchMergeKey`), and its
# lists merged as sets of primitives (`patchStrategy:"merge"` without a key).
_MERGE_KEYS = {
    ("metadata", "ownerReferences"): "uid",
    ("status", "conditions"): "type",
    ("status", "addresses"): "type",
    ("status", "volumesAttached"): "name",
}
_PRIMITIVE_SETS = {("metadata", "finalizers"), ("spec", "podCIDRs")}
_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVES = "$deleteFromPrimitiveList/"


class PatchError(LimitguardError):
    """A patch kube-apiserver would refuse: its HTTP status, reason and message."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status, self.reason, self.message = status, reason, message


def apply_node_patch(stored: Mapping[str, Any], content_type: str, body: bytes, name: str) -> dict[str, Any]:
    """The Node *stored* as the patch leaves it, checked; PatchError when the apiserver would refuse."""
    media = content_type.split(";")[0].strip().lower()
    if media not in PATCH_TYPES:
        raise PatchError(
            415, "UnsupportedMediaType", f'the body of the request was in an unknown format "{media}"'
        )
    try:
        patch = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise PatchError(400, "BadRequest", f"error decoding patch: {error}") from None
    original = copy.deepcopy(dict(stored))
    if media == JSON_PATCH:
        if not isinstance(patch, list):
            raise PatchError(400, "BadRequest", "json patch must be a list of operations")
        try:
            patched = jsonpatch.apply_patch(original, patch)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError) as error:
            raise PatchError(
                422, "Invalid", f"the server rejected our request due to an error in our request: {error}"
            ) from None
    elif not isinstance(patch, dict):
        raise PatchError(400, "BadRequest", "a merge patch must be a JSON object")
    elif media == MERGE_PATCH:
        patched = _merge(original, patch)
    else:
        patched = _strategic(original, patch, ())
    if not isinstance(patched, dict):
        raise PatchError(422, "Invalid", "the patched object is not a Node")
    _check(stored, patched, name)
    return patched


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge(result.get(key), value)
    return result


def _strategic(target: Any, patch: Any, path: tuple[str, ...]) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    rest = {key: value for key, value in patch.items() if key != "$patch"}
    if directive == "replace":
        return _strategic({}, rest, path)
    if directive not in (None, "merge"):
        raise PatchError(400, "BadRequest", f"unknown patch type: {directive}")
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in rest.items():
        if key.startswith(_ORDER):
            continue
        if key.startswith(_DELETE_PRIMITIVES):
            field = key[len(_DELETE_PRIMITIVES) :]
            if isinstance(result.get(field), list) and isinstance(value, list):
                result[field] = [item for item in result[field] if item not in value]
            continue
        if key.startswith("$"):
            raise PatchError(400, "BadRequest", f"unknown strategic merge patch directive {key}")
        child = (*path, key)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and child in _MERGE_KEYS:
            result[key] = _merge_list(result.get(key), value, _MERGE_KEYS[child], child)
        elif isinstance(value, list) and child in _PRIMITIVE_SETS:
            existing = result.get(key) if isinstance(result.get(key), list) else []
            result[key] = existing + [item for item in value if item not in existing]
        else:
            merged = _strategic(result.get(key), value, child)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
    return result


def _merge_list(target: Any, patch: list[Any], key: str, path: tuple[str, ...]) -> list[Any]:
    items = [copy.deepcopy(item) for item in target] if isinstance(target, list) else []
    for change in patch:
        if not isinstance(change, dict) or key not in change:
            raise PatchError(400, "BadRequest", f"map in {'.'.join(path)} lacks its merge key {key}")
        index = next(
            (i for i, item in enumerate(items) if isinstance(item, dict) and item.get(key) == change[key]),
            None,
        )
        if change.get("$patch") == "delete":
            if index is not None:
                del items[index]
        elif index is None:
            items.append(_strategic({}, change, path))
        else:
            items[index] = _strategic(items[index], change, path)
    return items


def _check(stored: Mapping[str, Any], patched: dict[str, Any], name: str) -> None:
    before = stored.get("metadata") or {}
    metadata = patched.get("metadata")
    if not isinstance(metadata, dict):
        raise PatchError(422, "Invalid", f'Node "{name}" is invalid: metadata: Required value')
    if metadata.get("name") != name:
        raise PatchError(
            400,
            "BadRequest",
            f"the name of the object ({metadata.get('name')}) does not match the name on the URL ({name})",
        )
    version = metadata.get("resourceVersion")
    if version not in (None, "") and str(version) != str(before.get("resourceVersion")):
        raise PatchError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on nodes "{name}": the object has been modified; please apply '
            "your changes to the latest version and try again",
        )
    if metadata.get("uid") not in (None, "", before.get("uid")):
        raise PatchError(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on nodes "{name}": Precondition failed: UID in precondition',
        )
    problems = _label_problems(metadata.get("labels")) + _taint_problems(
        (patched.get("spec") or {}).get("taints")
    )
    if problems:
        raise PatchError(422, "Invalid", f'Node "{name}" is invalid: ' + "; ".join(problems))
    if "status" in stored:
        patched["status"] = copy.deepcopy(stored["status"])
    else:
        patched.pop("status", None)


def _label_problems(labels: Any) -> list[str]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return ["metadata.labels: Invalid value: must be a map of strings"]
    problems = []
    for key, value in labels.items():
        if not is_qualified_name(key):
            problems.append(
                f"metadata.labels: Invalid value: {key!r}: name part must consist of alphanumeric characters"
            )
        if not is_label_value(value):
            problems.append(
                f"metadata.labels: Invalid value: {value!r}: a valid label must be 63 characters or less"
            )
    return problems


def _taint_problems(taints: Any) -> list[str]:
    if taints is None:
        return []
    if not isinstance(taints, list):
        return ["spec.taints: Invalid value: must be a list"]
    problems, seen = [], set()
    for index, taint in enumerate(taints):
        where = f"spec.taints[{index}]"
        if not isinstance(taint, dict):
            problems.append(f"{where}: Invalid value: must be an object")
            continue
        key, effect = taint.get("key"), taint.get("effect")
        if not is_qualified_name(key):
            problems.append(f"{where}.key: Invalid value: {key!r}")
        if not is_label_value(taint.get("value") or ""):
            problems.append(f"{where}.value: Invalid value: {taint.get('value')!r}")
        if effect not in TAINT_EFFECTS:
            problems.append(
                f'{where}.effect: Unsupported value: {effect!r}: supported values: "NoExecute", "NoSchedule", "PreferNoSchedule"'
            )
        if (key, effect) in seen:
            problems.append(f"{where}: Duplicate value: taints must be unique by key and effect pair")
        seen.add((key, effect))
    return problems
