"""The top-level kubernetesVersion key: the release whose pod rules apply, and the default of
schedulerConfigValidation.kubernetesVersion; and how a server picks the release in effect."""

from __future__ import annotations

import pytest

from limitguard.cli.configfile import load_config
from limitguard.core.config import ConfigError
from limitguard.core.kubeversion import release_in_effect

HEADER = "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"


def load(tmp_path, body: str):
    path = tmp_path / "config.yaml"
    path.write_text(HEADER + body)
    return load_config(path)


@pytest.mark.parametrize("text", ["1.36", "v1.37.1", "v1.31"])
def test_the_key_takes_a_release_and_defaults_the_scheduler_release(tmp_path, text):
    config = load(tmp_path, f'kubernetesVersion: "{text}"\n')
    assert config.kubernetes_version == text
    assert config.scheduler_kubernetes_version == text


def test_the_scheduler_section_keeps_its_own_release(tmp_path):
    config = load(
        tmp_path, 'kubernetesVersion: "1.36"\nschedulerConfigValidation:\n  kubernetesVersion: "1.35"\n'
    )
    assert (config.kubernetes_version, config.scheduler_kubernetes_version) == ("1.36", "1.35")


def test_unset_leaves_both_to_the_cluster(tmp_path):
    config = load(tmp_path, "limitAware: {}\n")
    assert config.kubernetes_version is None and config.scheduler_kubernetes_version is None


@pytest.mark.parametrize("text", ["2.1", "1.x", "latest", "1.36.2.1"])
def test_a_malformed_release_is_refused_with_the_key(tmp_path, text):
    with pytest.raises(ConfigError) as raised:
        load(tmp_path, f'kubernetesVersion: "{text}"\n')
    assert "kubernetesVersion" in str(raised.value)


def test_the_configured_release_wins_over_the_cluster():
    minor, why, warning = release_in_effect("1.36", "v1.37.0", live=True)
    assert (minor, warning) == (36, None)
    assert "kubernetesVersion '1.36'" in why


def test_the_clusters_version_decides_when_unset():
    minor, why, warning = release_in_effect(None, "v1.35.4-gke.1200", live=True)
    assert (minor, warning) == (35, None)
    assert "v1.35.4-gke.1200" in why


@pytest.mark.parametrize(("version", "minor"), [("v1.39.0", 37), ("v1.29.3", 31)])
def test_a_release_outside_the_range_is_clamped_with_a_warning(version, minor):
    got, _, warning = release_in_effect(None, version, live=True)
    assert got == minor
    assert warning is not None and f"rules of 1.{minor}" in warning


def test_file_mode_and_an_unreadable_cluster_use_the_newest():
    assert release_in_effect(None, None, live=False)[0] == 37
    assert "no apiserver" in release_in_effect(None, None, live=False)[1]
    assert release_in_effect(None, None, live=True)[0] == 37
    minor, _, warning = release_in_effect(None, "garbage", live=True)
    assert minor == 37 and "unreadable" in warning
