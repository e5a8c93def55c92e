"""Default limits and explicit requests for best-effort pods (SPEC 5), as an RFC 6902 JSONPatch.

Explicit requests matter: after a mutation the apiserver runs defaulting again, and pod defaulting
copies a limit into a missing request, which would silently turn the pod Guaranteed and change
what the scheduler reserves for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from limitguard.core.config import BestEffortDefaults
from limitguard.core.configread import defaults_problems
from limitguard.core.objects import is_object
from limitguard.core.podresources import PodSpecError
from limitguard.core.qos import QOSClass, compute_pod_qos
from limitguard.errors import LimitguardError

DEFAULTED_ANNOTATION = "limitguard.io/defaulted"
SKIP_ANNOTATION = "limitguard.io/skip-defaults"
NAMESPACE_DEFAULTS_ANNOTATION = "limitguard.io/default-limits"
# A namespace opts into defaults with this label (the chart's namespaceSelector matches the same).
OPT_IN_LABEL, OPT_IN_VALUE = "limitguard.io/defaults", "enabled"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
DEFAULTED_RESOURCES = ("cpu", "memory")
_CONTAINER_FIELDS = ("containers", "initContainers")  # ephemeral containers take no resources

Patch = list[dict[str, Any]]


class NotAPod(LimitguardError, ValueError):
    """The object is too broken to patch; the apiserver's own validation will reject it."""


def pointer(*parts: str | int) -> str:
    """An RFC 6901 JSON pointer: `~` becomes `~0`, `/` becomes `~1`."""
    texts = [str(part) for part in parts]
    for index, text in enumerate(texts):
        if "~" in text or "/" in text:  # rare (annotation keys): escape only those
            texts[index] = text.replace("~", "~0").replace("/", "~1")
    return "".join("/" + text for text in texts)


def skips_defaults(annotations: Mapping[str, Any]) -> bool:
    return str(annotations.get(SKIP_ANNOTATION, "")).lower() == "true"


def opted_in(labels: Mapping[str, Any]) -> bool:
    """The namespace asked for defaults (label `limitguard.io/defaults: enabled`, exact as a selector)."""
    return labels.get(OPT_IN_LABEL) == OPT_IN_VALUE


def namespace_defaults(
    base: BestEffortDefaults, annotation: str | None
) -> tuple[BestEffortDefaults, str | None]:
    """The namespace's override (`{"limits": {...}, "requests": {...}}`) merged over *base*.

    A malformed override is reported and ignored: the cluster defaults still apply.
    """
    if annotation is None:
        return base, None
    try:
        raw = json.loads(annotation)
    except ValueError as error:
        return base, f"{NAMESPACE_DEFAULTS_ANNOTATION} is not valid JSON: {error}"
    if not isinstance(raw, dict) or not set(raw) <= {"limits", "requests"}:
        return base, f'{NAMESPACE_DEFAULTS_ANNOTATION} must be an object with "limits" and/or "requests"'
    merged: dict[str, dict[str, Any]] = {"limits": dict(base.limits), "requests": dict(base.requests)}
    for kind in ("limits", "requests"):
        override = raw.get(kind) or {}
        if not isinstance(override, dict) or not set(override) <= set(DEFAULTED_RESOURCES):
            return base, f"{NAMESPACE_DEFAULTS_ANNOTATION}: {kind} may only set cpu and memory"
        merged[kind].update(override)
    problems = defaults_problems(merged, NAMESPACE_DEFAULTS_ANNOTATION)
    if problems:
        return base, "; ".join(problems)
    return replace(base, limits=merged["limits"], requests=merged["requests"]), None


def _containers(spec: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    containers = spec.get(field)
    if containers is None:
        return []
    if not isinstance(containers, list) or not all(is_object(c) for c in containers):
        raise NotAPod(f"spec.{field} is not a list of objects")
    return containers


def _resources(container: Mapping[str, Any]) -> Mapping[str, Any]:
    resources = container.get("resources")
    if resources is None:
        return {}
    if not is_object(resources):
        raise NotAPod("container resources is not an object")
    for kind in ("limits", "requests"):
        if resources.get(kind) is not None and not is_object(resources[kind]):
            raise NotAPod(f"container resources.{kind} is not an object")
    return resources


def is_best_effort(spec: Mapping[str, Any]) -> bool:
    """ComputePodQOS says BestEffort: no cpu/memory request or limit above zero, pod-level included."""
    for field in _CONTAINER_FIELDS:
        for container in _containers(spec, field):
            _resources(container)  # shape checks
    try:
        return compute_pod_qos(spec) is QOSClass.BEST_EFFORT
    except PodSpecError as error:
        raise NotAPod(str(error)) from None


def _names_no_defaulted_resource(resources: Mapping[str, Any]) -> bool:
    """A container that says nothing about cpu or memory (not even "0"): reinvocation defaults it."""
    return not any(
        resource in (resources.get(kind) or {})
        for kind in ("limits", "requests")
        for resource in DEFAULTED_RESOURCES
    )


def _container_ops(
    path: tuple[str | int, ...], resources: Mapping[str, Any], defaults: BestEffortDefaults
) -> Patch:
    """Add only what is missing. A resource whose limit is present (an explicit "0" on a best-effort
    pod) is left alone: API defaulting copies that limit into the request, and any request we added
    would exceed it."""
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    wanted: dict[str, dict[str, Any]] = {"limits": {}, "requests": {}}
    for resource in DEFAULTED_RESOURCES:
        if resource in limits:
            continue
        if resource in defaults.limits:
            wanted["limits"][resource] = defaults.limits[resource]
        if resource not in requests and resource in defaults.requests:
            wanted["requests"][resource] = defaults.requests[resource]
    wanted = {kind: amounts for kind, amounts in wanted.items() if amounts}
    if not wanted:
        return []
    if not resources:
        return [{"op": "add", "path": pointer(*path, "resources"), "value": wanted}]
    ops: Patch = []
    for kind, amounts in wanted.items():
        if resources.get(kind) is None:
            ops.append({"op": "add", "path": pointer(*path, "resources", kind), "value": amounts})
        else:
            ops += [
                {"op": "add", "path": pointer(*path, "resources", kind, resource), "value": quantity}
                for resource, quantity in amounts.items()
            ]
    return ops


_UNSET = ("unset",)  # a field that is absent or null, told apart from an empty map in a shape key


def _map_key(value: Any) -> tuple[Any, ...]:
    if value is None:
        return _UNSET
    if type(value) is not dict:
        raise TypeError  # not worth memoising: compute, and let the checks judge it
    return tuple(value.items())


def patch_shape(pod: Any, defaults: BestEffortDefaults) -> tuple[Any, ...] | None:
    """Everything `best_effort_patch` reads, hashable: pods of one shape get the same patch, so a
    caller may memoise the patch by it. None for shapes not worth memoising (odd types)."""
    if type(pod) is not dict:
        return None
    spec, metadata = pod.get("spec"), pod.get("metadata")
    if type(spec) is not dict or type(metadata) not in (dict, type(None)):
        return None
    annotations = metadata.get("annotations") if metadata is not None else None
    if type(annotations) not in (dict, type(None)):
        return None
    try:
        key: list[Any] = [
            _map_key(defaults.limits),
            _map_key(defaults.requests),
            metadata is None,
            bool(annotations),
            # the annotations the patch reads (not all of them: pods often differ in others)
            annotations.get(SKIP_ANNOTATION) if annotations else None,
            bool(annotations) and DEFAULTED_ANNOTATION in annotations,
            bool(annotations) and MIRROR_ANNOTATION in annotations,
            spec.get("resources") is None,
        ]
        for field in _CONTAINER_FIELDS:
            containers = spec.get(field)
            if containers is None:
                key.append(None)
                continue
            if type(containers) is not list:
                return None
            for container in containers:
                resources = container.get("resources")
                if resources is None or type(resources) is not dict:
                    key.append(_map_key(resources))
                else:
                    key.append((_map_key(resources.get("limits")), _map_key(resources.get("requests"))))
            key.append(len(containers))
        found = tuple(key)
        hash(found)
        return found
    except (TypeError, AttributeError):  # unhashable quantities, containers that are not objects
        return None


def best_effort_patch(pod: Mapping[str, Any], defaults: BestEffortDefaults) -> Patch:
    """The JSONPatch that gives every regular and init container the defaults; [] when not best-effort.

    Reinvocation (our annotation already present): only containers naming neither cpu nor memory,
    i.e. ones a later webhook added, get defaults."""
    if not is_object(pod):
        raise NotAPod("object is not a pod")
    spec = pod.get("spec")
    metadata = pod.get("metadata")
    if not is_object(spec) or (metadata is not None and not is_object(metadata)):
        raise NotAPod("pod has no spec object")
    metadata = metadata or {}
    annotations = metadata.get("annotations")
    if annotations is not None and not is_object(annotations):
        raise NotAPod("metadata.annotations is not an object")
    annotations = annotations or {}
    if MIRROR_ANNOTATION in annotations or skips_defaults(annotations):
        return []
    if spec.get("resources") is not None:
        # Pod-level resources (even an empty object): the apiserver holds container requests to the
        # pod-level ones and container limits below them, so container defaults could break the pod.
        # This also makes the answer independent of the release: from 1.37 the pod-level requests
        # are defaulted after the mutating webhooks, before that already when they run, and the
        # QoS rules that differ between releases only concern pods with spec.resources.
        return []
    reinvoked = DEFAULTED_ANNOTATION in annotations
    if not reinvoked and not is_best_effort(spec):
        return []
    ops: Patch = []
    for field in _CONTAINER_FIELDS:
        for index, container in enumerate(_containers(spec, field)):
            resources = _resources(container)
            if reinvoked and not _names_no_defaulted_resource(resources):
                continue  # reinvocation: only containers added since (by a later webhook)
            ops += _container_ops(("spec", field, index), resources, defaults)
    if not ops:  # nothing to default (no containers, or a reinvocation with nothing new)
        return []
    if reinvoked:
        return ops  # the annotation is already there
    injected = ",".join(resource for resource in DEFAULTED_RESOURCES if resource in defaults.limits)
    marker = {DEFAULTED_ANNOTATION: injected}
    if pod.get("metadata") is None:
        ops.append({"op": "add", "path": "/metadata", "value": {"annotations": marker}})
    elif not annotations:  # absent, null or empty: "add" creates or replaces the whole map
        ops.append({"op": "add", "path": "/metadata/annotations", "value": marker})
    else:
        ops.append(
            {"op": "add", "path": pointer("metadata", "annotations", DEFAULTED_ANNOTATION), "value": injected}
        )
    return ops


def with_adds(pod: Mapping[str, Any], operations: list[dict[str, Any]]) -> dict[str, Any]:
    """*pod* with the "add" operations of a defaults patch applied: a copy of each object and list
    on the operations' paths only (the input is unchanged, and the rest is shared, not copied). The
    values are put in as they are: *operations* must be the caller's own (JsonPatch.operations())."""
    result = dict(pod)
    for operation in operations:
        if operation.get("op") != "add":
            raise ValueError(f"unexpected patch operation {operation.get('op')!r}")
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in operation["path"].split("/")[1:]
        ]
        target: Any = result
        for part in parents:
            key: Any = int(part) if isinstance(target, list) else part
            child = target[key]
            child = list(child) if isinstance(child, list) else dict(child)
            target[key] = child
            target = child
        value = operation["value"]
        if isinstance(target, list):
            target.insert(len(target) if last == "-" else int(last), value)
        else:
            target[last] = value
    return result
