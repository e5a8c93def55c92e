"""The one release resolver: a build, then what is named (flag, file), then the cluster's /version,
else the newest supported release; and each answer credits the source that decided."""

from __future__ import annotations

import pytest

from limitguard.core.kuberelease import BuiltOn, from_file, from_flag, resolve_release


def test_the_first_source_named_decides_and_is_credited() -> None:
    flag = from_flag("--kubernetes-version", "v1.36.2")
    file = from_file("kubernetesVersion", "1.35", "config.yaml")
    release, why = resolve_release(flag, file, cluster="v1.37.0")
    assert (release.minor, release.note, why) == (36, None, "--kubernetes-version v1.36.2")
    release, why = resolve_release(None, file, cluster="v1.37.0")
    assert (release.minor, why) == (35, "kubernetesVersion '1.35' configured in config.yaml")
    release, why = resolve_release(from_flag("--kubernetes-version", None), None, cluster="v1.33.4")
    assert (release.minor, why) == (33, "cluster v1.33.4, from the apiserver's /version")


def test_a_file_without_a_path_is_the_configuration_file() -> None:
    _, why = resolve_release(from_file("schedulerConfigValidation.kubernetesVersion", "1.32"))
    assert why == "schedulerConfigValidation.kubernetesVersion '1.32' configured in the configuration file"


def test_a_build_decides_whatever_is_named() -> None:
    release, why = resolve_release(
        from_flag("--kubernetes-version", "1.33"), build=BuiltOn("koord-scheduler v1.8.0", 35)
    )
    assert (release.minor, release.note, why) == (35, None, "koord-scheduler v1.8.0 is Kubernetes 1.35")
    release, why = resolve_release(build=BuiltOn("koord-scheduler v1.7.0", 28))
    assert (release.minor, release.note, why) == (31, None, "koord-scheduler v1.7.0 is Kubernetes 1.28")


@pytest.mark.parametrize(("version", "minor"), [("v1.39.0", 37), ("v1.29.3", 31)])
def test_a_release_outside_the_range_is_the_nearest_with_a_note(version: str, minor: int) -> None:
    release, why = resolve_release(cluster=version, cluster_asked=True)
    assert release.minor == minor
    assert release.note == (
        f"Kubernetes version {version!r} is outside the supported 1.31-1.37: applying the rules of 1.{minor}"
    )
    assert why == f"cluster {version}, from the apiserver's /version, nearest supported 1.{minor}"


def test_the_default_says_why_nothing_decided() -> None:
    release, why = resolve_release()
    assert (release.minor, release.note) == (37, None)
    assert why == (
        "the newest supported release, the default: no release is named and there is no apiserver to ask"
    )
    _, why = resolve_release(None, cluster=None, cluster_asked=True)
    assert why == "the newest supported release, the default: the apiserver's /version could not be read"


def test_an_unreadable_version_is_the_default_with_a_note() -> None:
    release, why = resolve_release(cluster="garbage", cluster_asked=True)
    assert release.minor == 37
    assert release.note == "unreadable Kubernetes version 'garbage': applying the rules of 1.37"
    assert why == "the newest supported release; unreadable: cluster garbage, from the apiserver's /version"
