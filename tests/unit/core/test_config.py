"""limitguard's configuration file: defaults, and every bad value rejected at start-up with its path."""

import pytest

from limitguard.cli.configfile import load_config, parse_config
from limitguard.core.config import ConfigError, Enforcement, NotReadyPolicy, UnboundPolicy

HEADER = "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"


def load(tmp_path, body: str):
    path = tmp_path / "config.yaml"
    path.write_text(HEADER + body)
    return load_config(path)


def test_defaults_without_a_file():
    config = load_config(None)
    assert config.limit_aware.default_ratios == {}
    assert config.limit_aware.enforcement is Enforcement.DENY
    assert config.limit_aware.unbound_pods is UnboundPolicy.WARN
    assert config.limit_aware.exempt_daemonset_pods is True
    assert config.excluded_namespaces == {"kube-system"}
    assert dict(config.best_effort_defaults.limits) == {"cpu": "500m", "memory": "512Mi"}
    assert config.while_not_ready is NotReadyPolicy.ALLOW
    assert [scorer.name for scorer in config.scorers] == ["LimitAware"]
    assert config.placement_hints.scheduler_names == {"default-scheduler"}


def test_the_schedulers_whose_pods_get_hints_load(tmp_path):
    config = load(tmp_path, "placementHints: {schedulerNames: [default-scheduler, koord-scheduler]}\n")
    assert config.placement_hints.scheduler_names == {"default-scheduler", "koord-scheduler"}
    assert config.placement_hints.weight == 100  # the others keep their defaults
    assert not config.placement_hints.avoid_full_nodes.enabled


def test_avoid_full_nodes_loads_with_its_defaults(tmp_path):
    avoid = load(
        tmp_path, "placementHints: {avoidFullNodes: {enabled: true}}\n"
    ).placement_hints.avoid_full_nodes
    assert (avoid.enabled, avoid.below, avoid.hysteresis) == (True, 10, 5)
    avoid = load(tmp_path, "placementHints: {avoidFullNodes: {below: 20, hysteresis: 80}}\n").placement_hints
    assert (avoid.avoid_full_nodes.below, avoid.avoid_full_nodes.hysteresis) == (20, 80)


def test_the_issue_example_loads(tmp_path):
    config = load(
        tmp_path,
        """
limitAware:
  defaultLimitToAllocatableRatio: {cpu: 150, memory: "120%"}
  enforcement: Warn
  unboundPods: Deny
  exemptDaemonSetPods: false
excludedNamespaces: [kube-system, monitoring]
bestEffortDefaults:
  enabled: true
  limits:   {cpu: 500m, memory: 512Mi}
  requests: {cpu: 100m, memory: 200Mi}
""",
    )
    assert config.limit_aware.default_ratios == {"cpu": 150, "memory": 120}
    assert config.limit_aware.enforcement is Enforcement.WARN
    assert config.limit_aware.unbound_pods is UnboundPolicy.DENY
    assert config.excluded_namespaces == {"kube-system", "monitoring"}


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (
            "limitAware: {defaultLimitToAllocatableRatio: {cpu: '150'}}",
            "limitAware.defaultLimitToAllocatableRatio.cpu",
        ),
        (
            "limitAware: {defaultLimitToAllocatableRatio: {cpu: 1.5}}",
            "limitAware.defaultLimitToAllocatableRatio.cpu",
        ),
        (
            "limitAware: {defaultLimitToAllocatableRatio: {gpu: 100}}",
            "limitAware.defaultLimitToAllocatableRatio",
        ),
        ("limitAware: {enforcement: Block}", "limitAware.enforcement"),
        ("limitAware: {unboundPods: warn}", "limitAware.unboundPods"),
        ("limitAware: {bindingLedgerTTLSeconds: 0}", "limitAware.bindingLedgerTTLSeconds"),
        ("limitAware: {enforcment: Deny}", "limitAware"),
        ("excludedNamespaces: [Kube_System]", "excludedNamespaces[0]"),
        ("bestEffortDefaults: {limits: {cpu: lots}}", "bestEffortDefaults.limits.cpu"),
        ("bestEffortDefaults: {limits: {gpu: 1}}", "bestEffortDefaults.limits"),
        ("whileNotReady: Maybe", "whileNotReady"),
        ("placementHints: {schedulerNames: koord-scheduler}", "placementHints.schedulerNames"),
        ("placementHints: {schedulerNames: [Koord_Scheduler]}", "placementHints.schedulerNames[0]"),
        ("placementHints: {schedulerNames: ['']}", "placementHints.schedulerNames[0]"),
        ("placementHints: {maxNodes: 500}", "placementHints"),  # hostname lists are gone
        ("placementHints: {avoidFullNodes: {below: 0}}", "placementHints.avoidFullNodes.below"),
        ("placementHints: {avoidFullNodes: {below: 100}}", "placementHints.avoidFullNodes.below"),
        ("placementHints: {avoidFullNodes: {below: 50, hysteresis: 51}}", "placementHints.avoidFullNodes"),
        ("placementHints: {avoidFullNodes: {enabled: yes please}}", "placementHints.avoidFullNodes.enabled"),
        ("unknownTopLevel: 1", "unknownTopLevel"),  # the field itself, not <root> (issue 15)
        ("extender: {scorers: [{name: LimitAware, weight: 101}]}", "extender.scorers[0].weight"),
    ],
)
def test_bad_values_are_rejected_with_their_path(tmp_path, body, path):
    with pytest.raises(ConfigError) as error:
        load(tmp_path, body)
    assert any(problem.startswith(path) for problem in error.value.problems), error.value.problems


def test_default_requests_must_not_exceed_default_limits(tmp_path):
    with pytest.raises(ConfigError, match="default request 1 exceeds default limit 500m"):
        load(tmp_path, "bestEffortDefaults: {requests: {cpu: '1'}}")


def test_scorer_args_are_checked_by_the_validators_rules(tmp_path):
    with pytest.raises(ConfigError) as error:
        load(
            tmp_path,
            """
extender:
  scorers:
  - name: NodeResourcesFitPlus
    args: {kind: NodeResourcesFitPlusArgs, resources: {cpu: {type: MostAlocated, weight: 1}}}
""",
        )
    assert any('"MostAlocated"' in problem for problem in error.value.problems)


def test_wrong_kind_and_unreadable_files(tmp_path):
    with pytest.raises(ConfigError, match="kind"):
        parse_config({"apiVersion": "limitguard.io/v1alpha1", "kind": "Other"})
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("limitAware: [")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)


def test_every_error_is_reported_not_just_the_first(tmp_path):
    with pytest.raises(ConfigError) as error:
        load(tmp_path, "limitAware: {enforcement: Block, unboundPods: Sometimes}\nwhileNotReady: Maybe")
    assert len(error.value.problems) == 3
