"""Every real scheduler configuration in tests/fixtures is classified correctly."""

from __future__ import annotations

import pytest

from limitguard.schedcfg import validate_text
from limitguard.schedcfg.tables.releases import SUPPORTED_MINORS, Release
from tests.unit.schedcfg.helpers import FIXTURES, fixture_text, messages, paths, render_helm

HELM_VALUES = {
    ".Values.installation.namespace": "koordinator-system",
    ".Values.scheduler.enableJobPreemption": False,
    ".Values.scheduler.deviceShare": None,
}

#: Each with the scheduler it is written for (auto: detected, at its newest release).
VALID = {
    "schedcfg-v1-capacityscheduling.scheduler-plugins.yaml": "auto",
    "schedcfg-v1-configmap-koord-scheduler.koordinator-config-manager.yaml": "auto",
    "schedcfg-v1-coscheduling.scheduler-plugins.yaml": "auto",
    # NodeMetadata is registered on scheduler-plugins' development branch only
    "schedcfg-v1-multidoc-nodemetadata.scheduler-plugins.yaml": "scheduler-plugins@main",
    "schedcfg-v1-nodefit-mostallocated-extended.k8s-website-docs.yaml": "auto",
    "schedcfg-v1-noderesourcesallocatable.scheduler-plugins.yaml": "auto",
    "schedcfg-v1-profiles-fragment-nodefitplus-scarceavoid.koordinator-website.yaml": "auto",
}
# No supported kube-scheduler (1.31+) serves v1beta2 (gone in 1.28) or v1beta3 (gone in 1.29): these
# otherwise well-formed files are invalid with exactly one error, on apiVersion (issue 15; they used to
# pass with a deprecation warning).
OLD_API = [
    "schedcfg-v1beta2-configmap-koord-scheduler.koordinator-config-manager.yaml",
    "schedcfg-v1beta2-configmap-noderesourcetopology.scheduler-plugins.yaml",
    "schedcfg-v1beta2-qossort.scheduler-plugins.yaml",
    "schedcfg-v1beta3-noderesourcetopology.scheduler-plugins.yaml",
    "schedcfg-v1beta3-trimaran.scheduler-plugins.yaml",
]
TEMPLATES = [
    "schedcfg-v1-configmap-koord-scheduler-helm-v1.8.0.koordinator-charts.yaml.tpl",
    "schedcfg-v1beta2-configmap-koord-scheduler-helm-v1.3.0.koordinator-charts.yaml.tpl",
    "schedcfg-v1beta3-configmap-koord-scheduler-helm-v1.5.0.koordinator-charts.yaml.tpl",
]
# The website ConfigMaps embed YAML whose pluginConfig line is indented one space too little:
# line 5, column 2 of the value, which is line 12, column 6 of the file.
MALFORMED_INDENT = [
    "schedcfg-v1-configmap-nodefit-leastallocated-malformed-indent.koordinator-website.yaml",
    "schedcfg-v1-configmap-nodefit-mostallocated-malformed-indent.koordinator-website.yaml",
    "schedcfg-v1-configmap-nodefitplus-leastallocated-wrongkind.koordinator-website.yaml",
    "schedcfg-v1-configmap-nodefitplus-mostallocated-malformed-indent.koordinator-website.yaml",
]
INVALID = {
    "schedcfg-v1-reservationargs-preallocation.koordinator-website.yaml": ["profiles[0].plugins.reservation"],
    "schedcfg-v1beta3-reservationargs-preemption-typo-pluginConfigs.koordinator-website.yaml": [
        "apiVersion",
        "profiles[0].pluginConfigs",
        "profiles[0].plugins.postFilter",
    ],
}


def test_every_schedcfg_fixture_is_covered() -> None:
    listed = set(VALID) | set(OLD_API) | set(TEMPLATES) | set(MALFORMED_INDENT) | set(INVALID)
    assert {p.name for p in FIXTURES.glob("schedcfg-*") if p.is_file()} == listed


@pytest.mark.parametrize("name", VALID)
def test_shipped_configs_are_valid(name: str) -> None:
    report = validate_text(fixture_text(name), name, scheduler=VALID[name])
    assert report.ok, report.format()


def test_a_development_branch_plugin_is_refused_by_the_newest_release_naming_the_branch() -> None:
    name = "schedcfg-v1-multidoc-nodemetadata.scheduler-plugins.yaml"
    report = validate_text(fixture_text(name), name)
    assert {r.build_name for r in report.readers} == {"v0.34.7"}
    assert [f.rule for f in report.errors] == ["plugins.unknown"] * 4
    assert "--scheduler scheduler-plugins@main" in report.errors[0].message


@pytest.mark.parametrize("name", VALID)
def test_shipped_configs_are_valid_for_every_supported_release(name: str) -> None:
    """None of them uses a field, plugin or gate that a supported release lacks."""
    for minor in SUPPORTED_MINORS:
        report = validate_text(fixture_text(name), name, release=Release(minor), scheduler=VALID[name])
        assert report.ok, (minor, report.format())


@pytest.mark.parametrize("name", OLD_API)
def test_configs_in_unserved_api_versions_fail_only_on_api_version(name: str) -> None:
    report = validate_text(fixture_text(name), name)
    assert [(f.path.rsplit(".", 1)[-1], f.rule) for f in report.errors] == [
        ("apiVersion", "config.api-version-not-served")
    ]
    assert "migrate to kubescheduler.config.k8s.io/v1" in report.errors[0].message


@pytest.mark.parametrize("name", TEMPLATES)
def test_helm_templates_render_to_configs_whose_only_problem_is_the_api_version(name: str) -> None:
    rendered = render_helm(fixture_text(name), HELM_VALUES)
    assert "{{" not in rendered
    report = validate_text(rendered, name)
    if "-v1-" in name:
        assert report.ok, report.format()
    else:
        assert [f.rule for f in report.errors] == ["config.api-version-not-served"], report.format()


@pytest.mark.parametrize("name", TEMPLATES)
def test_unrendered_helm_templates_are_a_yaml_error_with_position(name: str) -> None:
    report = validate_text(fixture_text(name), name)
    assert not report.ok
    (error,) = report.errors
    assert error.rule == "yaml.syntax"
    assert error.line is not None and error.column is not None
    assert "run `helm template` first" in error.message


def test_helm_template_with_device_share_renders_and_stays_valid() -> None:
    values = {
        **HELM_VALUES,
        ".Values.scheduler.deviceShare": {"x": 1},
        ".Values.scheduler.enableJobPreemption": True,
    }
    rendered = render_helm(fixture_text(TEMPLATES[0]), values)
    assert "DeviceShareArgs" in rendered and "enablePreemption: true" in rendered
    assert validate_text(rendered).ok


@pytest.mark.parametrize("name", MALFORMED_INDENT)
def test_malformed_website_configmaps_report_yaml_error_in_file_coordinates(name: str) -> None:
    report = validate_text(fixture_text(name), name)
    (error,) = report.errors
    assert error.path == "data[scheduler-config.yaml]"
    assert "line 5, column 2 of the value" in error.message
    assert (error.line, error.column) == (12, 6)
    assert fixture_text(name).splitlines()[11][5:] == "pluginConfig:"


@pytest.mark.parametrize(("name", "expected"), INVALID.items())
def test_malformed_website_examples_are_invalid_with_the_right_paths(name: str, expected: list[str]) -> None:
    report = validate_text(fixture_text(name), name)
    assert paths(report) == expected


def test_postfilter_list_message_names_the_expected_type() -> None:
    name = "schedcfg-v1beta3-reservationargs-preemption-typo-pluginConfigs.koordinator-website.yaml"
    text = messages(validate_text(fixture_text(name)))
    assert any("pluginConfigs" in m and 'did you mean "pluginConfig"' in m for m in text)
    assert any(
        m.startswith("profiles[0].plugins.postFilter: Invalid value: [") and "must be of type object" in m
        for m in text
    )


def test_v1beta3_gets_the_same_verdict_whatever_the_supported_release() -> None:
    text = fixture_text("schedcfg-v1beta3-trimaran.scheduler-plugins.yaml")
    for minor in SUPPORTED_MINORS:
        report = validate_text(text, release=Release(minor), scheduler="kube-scheduler")
        assert [f.rule for f in report.errors] == ["config.api-version-not-served"]
        assert f"kube-scheduler 1.{minor}" in report.errors[0].message
    # its own scheduler (scheduler-plugins v0.34, Kubernetes 1.34) refuses it too, whatever the cluster runs
    for minor in SUPPORTED_MINORS:
        report = validate_text(text, release=Release(minor))
        assert [f.rule for f in report.errors] == ["config.api-version-not-served"]
        assert "scheduler-plugins v0.34.7 (Kubernetes 1.34)" in report.errors[0].message


def test_fragment_is_validated_as_v1_with_a_warning() -> None:
    report = validate_text(
        fixture_text("schedcfg-v1-profiles-fragment-nodefitplus-scarceavoid.koordinator-website.yaml")
    )
    assert [f.rule for f in report.warnings] == ["input.fragment"]
    # NodeResourcesFitPlus and ScarceResourceAvoidance are koord-scheduler's own plugins: no note
    assert [r.scheduler for r in report.readers] == ["koord-scheduler"] and report.infos == []
    kube = validate_text(
        fixture_text("schedcfg-v1-profiles-fragment-nodefitplus-scarceavoid.koordinator-website.yaml"),
        scheduler="kube-scheduler",
    )
    assert {f.rule for f in kube.infos} == {"plugins.out-of-tree"}


def test_out_of_tree_plugins_pass_through_with_a_note() -> None:
    """kube-scheduler's view: it cannot judge Koordinator's args (koord-scheduler's is test_schedulers)."""
    report = validate_text(
        fixture_text("schedcfg-v1-configmap-koord-scheduler.koordinator-config-manager.yaml"),
        scheduler="kube-scheduler",
    )
    noted = {f.value for f in report.infos if f.rule == "args.unknown-plugin"}
    assert noted == {"LoadAwareScheduling", "ElasticQuota"}
    # positions point into the outer file: pluginConfig[1] (LoadAwareScheduling) args start at line 33
    note = next(f for f in report.infos if f.value == "LoadAwareScheduling")
    assert note.path == "data[koord-scheduler-config].profiles[0].pluginConfig[1].args"
    assert note.line == 33


def test_multidoc_findings_carry_the_document_index() -> None:
    report = validate_text(fixture_text("schedcfg-v1-multidoc-nodemetadata.scheduler-plugins.yaml"))
    assert sorted({f.document for f in report.infos}) == [1, 2, 3, 4]
