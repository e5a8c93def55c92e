"""limitguard's own configuration file reports problems like `limitguard validate` does (issue 15):
the field path, a Kubernetes-style message and "did you mean" - not raw JSON Schema text."""

from __future__ import annotations

from pathlib import Path

import pytest

from limitguard.cli.configfile import load_config
from limitguard.core.config import ConfigError

HEAD = "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"


def problems(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "limitguard.yaml"
    path.write_text(HEAD + body)
    with pytest.raises(ConfigError) as error:
        load_config(path)
    return error.value.problems


def test_misspelled_field_gets_its_path_and_a_suggestion(tmp_path: Path) -> None:
    assert problems(tmp_path, "limitAware:\n  enforcment: Deny\n") == [
        'limitAware.enforcment: Forbidden: unknown field "enforcment" (did you mean "enforcement"?)'
    ]


def test_no_raw_json_schema_text(tmp_path: Path) -> None:
    found = problems(tmp_path, "exludedNamespaces: [a]\nwhileNotReady: Maybe\n")
    assert found == [
        'exludedNamespaces: Forbidden: unknown field "exludedNamespaces" (did you mean "excludedNamespaces"?)',
        'whileNotReady: Unsupported value: "Maybe": supported values: "Allow", "Deny"',
    ]
    assert not any("Additional properties" in p or "is not one of" in p for p in found)


def test_scheduler_config_validation_section(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(
        HEAD
        + "schedulerConfigValidation:\n  kubernetesVersion: '1.33'\n  featureGates: {StorageCapacityScoring: true}\n"
    )
    config = load_config(path)
    assert config.scheduler_kubernetes_version == "1.33"
    assert config.scheduler_feature_gates == {"StorageCapacityScoring": True}
    assert problems(tmp_path, "schedulerConfigValidation: {kubernetesVersion: '1.20'}") == [
        "schedulerConfigValidation.kubernetesVersion: Kubernetes version '1.20' is not supported; "
        "supported: 1.31-1.37"
    ]
    assert problems(tmp_path, "schedulerConfigValidation: {kubernetesVersoin: '1.33'}")[0].startswith(
        'schedulerConfigValidation.kubernetesVersoin: Forbidden: unknown field "kubernetesVersoin" '
        '(did you mean "kubernetesVersion"?)'
    )
