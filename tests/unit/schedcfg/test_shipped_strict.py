"""Every configuration Koordinator and scheduler-plugins ship passes `validate --strict` under its own
scheduler, unless a finding is true of it: then it is named here, with why it is true.

Shipped: koord-scheduler's Helm chart and kustomize file (tests/fixtures/koordinator, koordinator-helm;
v1.8.0), scheduler-plugins' v1 manifests (tests/fixtures/scheduler-plugins) and its README blocks and
older manifests as v1 (tests/fixtures/scheduler-plugins-docs; all v0.34.7, see PROVENANCE.md there).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from limitguard.cli.validate import main as validate_main
from limitguard.schedcfg import validate_text
from tests.support import FIXTURES

KOORD = "koord-scheduler"
SIGS = "scheduler-plugins"
DOCS = FIXTURES / "scheduler-plugins-docs"
SHIPPED: dict[str, list[Path]] = {
    KOORD: sorted(
        [*(FIXTURES / "koordinator").glob("*.yaml"), *(FIXTURES / "koordinator-helm").glob("*.yaml")]
    ),
    SIGS: sorted([*(FIXTURES / "scheduler-plugins").glob("*.yaml"), *DOCS.glob("*.yaml")]),
}

#: Findings that are true of a shipped file: file -> {rule: why it is true}.
TRUE_FINDINGS: dict[str, dict[str, str]] = {
    # score.disabled names NodeResourcesLeastAllocated, removed in Kubernetes 1.23 (merged into
    # NodeResourcesFit): disabling it has no effect (warning)
    "manifests-trimaran-scheduler-config.yaml": {"plugins.removed-disabled": "NodeResourcesLeastAllocated"},
    "pkg-trimaran-targetloadpacking-README-1.yaml": {
        "plugins.removed-disabled": "NodeResourcesLeastAllocated"
    },
    "pkg-trimaran-targetloadpacking-README-2.yaml": {
        "plugins.removed-disabled": "NodeResourcesLeastAllocated"
    },
    # cmd/scheduler/main.go:64 has CrossNodePreemption commented out: the scheduler refuses to start
    "pkg-crossnodepreemption-README-1.yaml": {"plugins.unknown": "CrossNodePreemption"},
    # the README's multiPoint names "BalancedAllocation"; the plugin is NodeResourcesBalancedAllocation
    "pkg-networkaware-README-1.yaml": {"plugins.unknown": "BalancedAllocation"},
    # v1beta1 NodeResourceTopologyMatchArgs had kubeconfigpath; v1's (apis/config/v1/types.go:230) has not
    "manifests-noderesourcetopology-scheduler-config-v1beta1.yaml": {
        "schema.unknown-field": "kubeconfigpath"
    },
    "manifests-noderesourcetopology-scheduler-configmap-v1beta1.yaml": {
        "schema.unknown-field": "kubeconfigpath"
    },
}

CASES = [(scheduler, path) for scheduler, paths in SHIPPED.items() for path in paths]


@pytest.mark.parametrize(("scheduler", "path"), CASES, ids=lambda c: c if isinstance(c, str) else c.name)
def test_shipped_configuration_is_strict_clean_but_for_true_findings(scheduler: str, path: Path) -> None:
    report = validate_text(path.read_text(encoding="utf-8"), scheduler=scheduler)
    found = {f.rule: f for f in report.findings if f.severity != "info"}
    expected = TRUE_FINDINGS.get(path.name, {})
    assert set(found) == set(expected), [str(f) for f in found.values()]
    for rule, value in expected.items():
        assert value in found[rule].message or value in found[rule].path, found[rule]


def test_the_docs_folder_is_what_its_provenance_lists() -> None:
    rows = [line for line in (DOCS / "PROVENANCE.md").read_text().splitlines() if line.startswith("| `")]
    assert sorted(row.split("`")[1] for row in rows) == sorted(p.name for p in DOCS.glob("*.yaml"))
    assert set(TRUE_FINDINGS) <= {p.name for paths in SHIPPED.values() for p in paths}


def test_the_cli_agrees_with_strict(capsys) -> None:
    clean = [str(path) for path in SHIPPED[SIGS] if path.name not in TRUE_FINDINGS]
    assert validate_main(["--strict", "--scheduler", SIGS, *clean]) == 0
    assert validate_main(["--strict", "--scheduler", KOORD, *map(str, SHIPPED[KOORD])]) == 0
    trimaran = str(DOCS / "manifests-trimaran-scheduler-config.yaml")
    assert validate_main(["--scheduler", SIGS, trimaran]) == 0
    assert validate_main(["--strict", "--scheduler", SIGS, trimaran]) == 1
    capsys.readouterr()


# ------------------------------------------------------------------------------------ insecureSkipVerify
TRIMARAN_README = DOCS / "pkg-trimaran-README-1.yaml"


def trimaran_config(address: str, **provider: object) -> str:
    """The Trimaran README's configuration (Prometheus at an http:// address) with another address."""
    config = yaml.safe_load(TRIMARAN_README.read_text(encoding="utf-8"))
    args = copy.deepcopy(config["profiles"][0]["pluginConfig"][0]["args"])
    args["metricProvider"] = {**args["metricProvider"], "address": address, **provider}
    config["profiles"][0]["pluginConfig"][0]["args"] = args
    return yaml.safe_dump(config)


def test_the_readme_prometheus_address_is_http() -> None:
    """So the TLS warning must stay silent on it (above): load-watcher speaks plain HTTP there."""
    text = TRIMARAN_README.read_text(encoding="utf-8")
    assert "type: Prometheus" in text and "address: http://prometheus-k8s.monitoring.svc" in text


@pytest.mark.parametrize("address", ["https://prometheus:9090", "HTTPS://prometheus:9090"])
def test_an_https_prometheus_without_insecure_skip_verify_is_warned(address: str) -> None:
    report = validate_text(trimaran_config(address), scheduler=SIGS)
    assert [f.rule for f in report.warnings] == ["sigs.trimaran.insecure-default"]
    assert "TLS certificate is not verified" in report.warnings[0].message
    explicit = validate_text(trimaran_config(address, insecureSkipVerify=False), scheduler=SIGS)
    assert explicit.passes(strict=True)


@pytest.mark.parametrize("address", ["http://prometheus:9090", "", "prometheus:9090"])
def test_no_tls_warning_without_an_https_address(address: str) -> None:
    assert validate_text(trimaran_config(address), scheduler=SIGS).passes(strict=True)
