"""The top-level kubernetesVersion key (the release whose pod rules apply) and the scheduler section's
own: each is read as written, and the resolver says which one decided."""

from __future__ import annotations

import pytest

from limitguard.cli.configfile import load_config
from limitguard.core.config import ConfigError

HEADER = "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"


def load(tmp_path, body: str):
    path = tmp_path / "config.yaml"
    path.write_text(HEADER + body)
    return load_config(path)


@pytest.mark.parametrize("text", ["1.36", "v1.37.1", "v1.31"])
def test_the_key_takes_a_release(tmp_path, text):
    config = load(tmp_path, f'kubernetesVersion: "{text}"\n')
    assert config.kubernetes_version == text
    assert config.scheduler_kubernetes_version is None  # the resolver falls back to the top-level key


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
