"""What each Kubernetes release counts in a pod: the one table of per-release pod rules.

Like a versioned feature-gate table: each row is the release where a default changed, and every
release takes the newest row at or below it. Counting (``limitguard.core.podresources``), QoS
(``limitguard.core.qos``), the mutator (``limitguard.core.defaults``) and nominations
(``limitguard.state``) ask a ``PodRules`` instead of comparing version numbers.

Sources: k8s.io/component-helpers ``resource/helpers.go`` at v0.35.7, v0.36.3 and v0.37.0-beta.0;
kubernetes ``pkg/apis/core/helper/qos/qos.go``; the gate defaults of ``pkg/features/kube_features.go``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from limitguard.core.kubeversion import DEFAULT_MINOR, OLDEST_MINOR, SUPPORTED_MINORS


@dataclass(frozen=True, slots=True)
class PodRules:
    """The pod rules of one Kubernetes release (the gates' defaults there)."""

    minor: int
    # component-helpers tag whose resource helpers the release vendors
    helpers_tag: str
    # InPlacePodLevelResourcesVerticalScaling on: a pod-level value counts max(spec, status)
    pod_level_resize: bool
    # helpers v0.37: during a resize the containers count max(sum of spec, sum of actuated[, sum of
    # allocated]) over the whole pod, every init container reads its status, pod-level status maps
    # stand in for the sums; before: per container max(spec, status), summed
    whole_pod_resize: bool
    # PodLevelResourcesFixKubeletQOSClass on: only a supported pod-level resource makes QoS pod-level
    qos_needs_pod_level_resource: bool
    # PodLevelResourcesFixDefaulting on: pod-level requests/limits are defaulted after the mutating
    # admission webhooks (validating webhooks see the defaulted pod)
    pod_level_defaulting_after_mutation: bool
    # the scheduler's nominator keeps the nominations of pods with scheduling gates
    gated_nominations_hold: bool

    @property
    def name(self) -> str:
        return f"1.{self.minor}"


# Each row: the first release with these rules. Releases between rows take the row below them.
_CHANGES: tuple[PodRules, ...] = (
    PodRules(
        minor=OLDEST_MINOR,
        helpers_tag="v0.35.7",
        pod_level_resize=False,
        whole_pod_resize=False,
        qos_needs_pod_level_resource=False,
        pod_level_defaulting_after_mutation=False,
        gated_nominations_hold=False,
    ),
    # 1.36: InPlacePodLevelResourcesVerticalScaling beta, on by default (helpers v0.36.3).
    PodRules(
        minor=36,
        helpers_tag="v0.36.3",
        pod_level_resize=True,
        whole_pod_resize=False,
        qos_needs_pod_level_resource=False,
        pod_level_defaulting_after_mutation=False,
        gated_nominations_hold=False,
    ),
    # 1.37: whole-pod resize sums (helpers v0.37), PodLevelResourcesFixKubeletQOSClass and
    # PodLevelResourcesFixDefaulting on, gated pods' nominations kept by the nominator.
    PodRules(
        minor=37,
        helpers_tag="v0.37.0-beta.0",
        pod_level_resize=True,
        whole_pod_resize=True,
        qos_needs_pod_level_resource=True,
        pod_level_defaulting_after_mutation=True,
        gated_nominations_hold=True,
    ),
)


def _rules_for(minor: int) -> PodRules:
    row = max((change for change in _CHANGES if change.minor <= minor), key=lambda change: change.minor)
    return replace(row, minor=minor)


RULES: dict[int, PodRules] = {minor: _rules_for(minor) for minor in SUPPORTED_MINORS}
DEFAULT_RULES = RULES[DEFAULT_MINOR]


def rules_for(minor: int) -> PodRules:
    """The rules of a supported minor (callers clamp or refuse others first)."""
    return RULES[minor]


def scheduling_group(spec: Mapping[str, Any]) -> str:
    """The PodGroup a pod belongs to (spec.schedulingGroup.podGroupName, GenericWorkload, 1.36+);
    "" for none. The scheduler places a group's members together but binds them one at a time."""
    group = spec.get("schedulingGroup") if isinstance(spec, Mapping) else None
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    return name[:253] if isinstance(name, str) else ""
