"""What each Kubernetes release counts in a pod: the pod rules, read from the one release table.

Counting (``limitguard.core.podresources``), QoS (``limitguard.core.qos``), the mutator
(``limitguard.core.defaults``) and nominations (``limitguard.state``) ask a ``PodRules`` instead of
comparing version numbers. Each rule is a gate's default or a change without a gate in
``limitguard.core.kubefeatures`` (the gates the feature-gate table lists for the pod rules), so this
module holds no release facts of its own. Whoever resolved the release
(``limitguard.core.kuberelease``) hands its rules down; nothing here keeps a release in effect.

Sources: k8s.io/component-helpers ``resource/helpers.go`` at v0.35.7, v0.36.3 and v0.37.0-beta.0;
kubernetes ``pkg/apis/core/helper/qos/qos.go``; the gate defaults of ``pkg/features/kube_features.go``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from limitguard.core.kubefeatures import gate_default, has_change
from limitguard.core.kubeversion import DEFAULT_MINOR, SUPPORTED_MINORS


@dataclass(frozen=True, slots=True)
class PodRules:
    """The pod rules of one Kubernetes release (the gates' defaults there)."""

    minor: int
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


def _read(minor: int) -> PodRules:
    """The rules of 1.<minor>, read from its gates' defaults and changes."""
    return PodRules(
        minor,
        pod_level_resize=bool(gate_default("InPlacePodLevelResourcesVerticalScaling", minor)),
        whole_pod_resize=has_change("pod-resources.whole-pod-resize", minor),
        qos_needs_pod_level_resource=bool(gate_default("PodLevelResourcesFixKubeletQOSClass", minor)),
        pod_level_defaulting_after_mutation=bool(gate_default("PodLevelResourcesFixDefaulting", minor)),
        gated_nominations_hold=has_change("scheduler.gated-nominations-hold", minor),
    )


RULES: dict[int, PodRules] = {minor: _read(minor) for minor in SUPPORTED_MINORS}
DEFAULT_RULES = RULES[DEFAULT_MINOR]


def rules_for(minor: int) -> PodRules:
    """The rules of a supported minor (the resolver clamps or refuses others first)."""
    return RULES[minor]


def scheduling_group(spec: Mapping[str, Any]) -> str:
    """The PodGroup a pod belongs to (spec.schedulingGroup.podGroupName, GenericWorkload, 1.36+);
    "" for none. The scheduler places a group's members together but binds them one at a time."""
    group = spec.get("schedulingGroup") if isinstance(spec, Mapping) else None
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    return name[:253] if isinstance(name, str) else ""
