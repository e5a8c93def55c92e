"""Mutation is opted into: the chart's mutating webhook and the server it configures agree on which
namespaces get best-effort defaults, and a default install mutates none of them; the placement
entry's namespaceSelector, computed from the enforcement settings, sends exactly the namespaces
where the server gives hints.

The namespaceSelector is evaluated with apimachinery's LabelSelector rules (matchLabels and
matchExpressions ANDed; NotIn matches an absent key) - kubernetes/apimachinery
pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector, pkg/labels/selector.go Requirement.Matches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import pytest

from limitguard.admission.mutating import Mutator
from limitguard.admission.review import decode_review
from limitguard.core.hints import skip_reason
from limitguard.state.store import ClusterState
from tests.e2e.chart.conftest import CHART, NAMESPACE, Helm
from tests.e2e.chart.rendered import Render, _config, webhooks
from tests.support import namespace, pod, pod_create

OPT_IN = {"limitguard.io/defaults": "enabled"}


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector against an object's labels (the operators a namespaceSelector may use)."""
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or ():
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        matched = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]
        if not matched:
            return False
    return True


NAMESPACES = [
    namespace("plain"),
    namespace("asked", labels=OPT_IN),
    namespace("asked-otherwise", labels={"limitguard.io/defaults": "true"}),
    namespace("kube-system", labels=OPT_IN),
    namespace(NAMESPACE, labels=OPT_IN),
    namespace("batch", labels=OPT_IN),
]


def mutated_namespaces(render: Render, *settings: str) -> tuple[set[str], set[str]]:
    """(namespaces the apiserver would send to /mutate, namespaces whose pod the server patches)."""
    objects = render("default", "config.excludedNamespaces={batch}", *settings)
    selector = webhooks(objects)["defaults.limitguard.io"]["namespaceSelector"]
    sent = {ns["metadata"]["name"] for ns in NAMESPACES if selects(selector, ns["metadata"]["labels"])}
    state = ClusterState()
    state.replace_namespaces(NAMESPACES)
    mutator = Mutator(state, _config(objects), hints=False)
    patched = set()
    for ns in NAMESPACES:
        name = ns["metadata"]["name"]
        body = pod_create(pod("p", namespace=name, containers=[{"name": "c", "image": "x"}]))
        if mutator(decode_review(orjson.dumps(body))).patch is not None:
            patched.add(name)
    return sent, patched


def test_a_default_install_defaults_only_namespaces_that_opted_in(render: Render) -> None:
    sent, patched = mutated_namespaces(render)
    assert sent == patched == {"asked"}


def test_without_the_label_requirement_every_namespace_not_excluded_is_defaulted(render: Render) -> None:
    sent, patched = mutated_namespaces(render, "config.bestEffortDefaults.requireNamespaceLabel=false")
    assert sent == patched == {"plain", "asked", "asked-otherwise"}


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ((), "kubectl label namespace NAME limitguard.io/defaults=enabled"),
        (("config.bestEffortDefaults.requireNamespaceLabel=false",), "every best-effort pod outside"),
        (("webhooks.defaults.enabled=false",), "off (best-effort pods stay unlimited)"),
    ],
)
def test_install_notes_say_where_defaults_apply(helm: Helm, settings: tuple[str, ...], expected: str) -> None:
    args = ["install", "lg", str(CHART), "--namespace", NAMESPACE, "--dry-run=client"]
    for item in settings:
        args += ["--set", item]
    notes = " ".join(helm.run(*args).stdout.split("NOTES:", 1)[1].split())
    assert expected in notes
    if not settings:
        assert "best-effort pods in every other namespace stay unlimited" in notes


HINT_NAMESPACES = ["team-a", "team-b", "plain", "kube-system", NAMESPACE, "batch"]


def hinted_namespaces(render: Render, *settings: str) -> tuple[set[str], set[str]]:
    """(namespaces the apiserver would send to /mutate-placement, namespaces the server hints in)."""
    objects = render("default", "config.excludedNamespaces={batch}", *settings)
    hook = webhooks(objects).get("placement.limitguard.io")
    sent = set()
    if hook is not None:
        sent = {
            name
            for name in HINT_NAMESPACES
            if selects(hook["namespaceSelector"], namespace(name)["metadata"]["labels"])
        }
        assert (hook["failurePolicy"], hook["timeoutSeconds"], hook["reinvocationPolicy"]) == (
            "Ignore",
            1,
            "IfNeeded",
        )
    config = _config(objects)
    hinted = {name for name in HINT_NAMESPACES if skip_reason(config, name, {}, {}, daemonset=False) is None}
    return sent, hinted


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ((), {"team-a", "team-b", "plain"}),
        (("config.limitAware.namespaceEnforcement.team-b=Warn",), {"team-a", "plain"}),
        (
            (
                "config.limitAware.enforcement=Warn",
                "config.limitAware.namespaceEnforcement.team-a=Deny",
                "config.limitAware.namespaceEnforcement.kube-system=Deny",
            ),
            {"team-a"},
        ),
        (("config.limitAware.enforcement=DryRun",), set()),
        (
            ("config.limitAware.enforcement=Warn", "config.placementHints.mode=Always"),
            {"team-a", "team-b", "plain"},
        ),
        (("config.placementHints.mode=Never",), set()),
    ],
)
def test_the_placement_entry_sends_exactly_the_namespaces_the_server_hints_in(
    render: Render, settings: tuple[str, ...], expected: set[str]
) -> None:
    sent, hinted = hinted_namespaces(render, *settings)
    assert sent == hinted == expected


def test_the_placement_entry_has_its_own_flag(render: Render) -> None:
    hooks = webhooks(render("default", "webhooks.defaults.enabled=false"))
    assert "placement.limitguard.io" in hooks and "defaults.limitguard.io" not in hooks
    hooks = webhooks(render("default", "webhooks.placement.enabled=false"))
    assert "defaults.limitguard.io" in hooks and "placement.limitguard.io" not in hooks


def test_the_schedulers_whose_pods_get_hints_reach_the_server(render: Render, helm: Helm) -> None:
    koord = {"schedulerName": "koord-scheduler"}
    default = _config(render("default"))
    assert default.placement_hints.scheduler_names == {"default-scheduler"}
    assert skip_reason(default, "team-a", koord, {}, daemonset=False) == "other-scheduler"
    listed = _config(
        render("default", "config.placementHints.schedulerNames={default-scheduler,koord-scheduler}")
    )
    assert skip_reason(listed, "team-a", koord, {}, daemonset=False) is None
    refused = helm.template("config.placementHints.schedulerNames={Koord_Scheduler}", check=False)
    assert refused.returncode != 0 and "schedulerNames" in refused.stderr
