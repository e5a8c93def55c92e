"""`kubectl limitguard`: kubectl's global flags, wherever kubectl passes them, reach the command."""

from __future__ import annotations

import pytest

from limitguard.cli.kubectl_plugin import limitguard_argv, split_kubectl_flags


@pytest.mark.parametrize(
    "argv",
    [
        ["--context", "prod", "audit", "-n", "shop", "--kubeconfig", "/k"],
        ["audit", "--context=prod", "-nshop", "--kubeconfig=/k"],
        ["-n", "shop", "audit", "--namespace=shop", "--context", "prod", "--kubeconfig", "/k"],
    ],
)
def test_kubectl_flags_in_any_form_and_place(argv: list[str]) -> None:
    flags, rest = split_kubectl_flags(argv)
    assert flags == {"context": "prod", "namespace": "shop", "kubeconfig": "/k"}
    assert rest == ["audit"]


def test_live_commands_get_the_flags_and_kubeconfig_from_the_environment() -> None:
    argv = limitguard_argv(
        ["explain", "pod.yaml", "-n", "shop", "--context", "prod"], {"KUBECONFIG": "/a:/b"}
    )
    assert argv == ["explain", "pod.yaml", "--kubeconfig=/a:/b", "--context=prod", "--namespace=shop"]
    # an explicit --kubeconfig wins over the environment, as in kubectl
    assert limitguard_argv(["audit", "--kubeconfig", "/x"], {"KUBECONFIG": "/a"}) == [
        "audit",
        "--kubeconfig=/x",
    ]


def test_validate_reads_files_only_and_ignores_them() -> None:
    assert limitguard_argv(["validate", "-n", "x", "--context", "c", "f.yaml"], {"KUBECONFIG": "/k"}) == [
        "validate",
        "f.yaml",
    ]


def test_flags_after_a_double_dash_are_the_commands_own() -> None:
    assert limitguard_argv(["validate", "--", "-n"], {}) == ["validate", "--", "-n"]


@pytest.mark.parametrize("argv", [[], ["serve"], ["--context", "x"]])
def test_other_commands_are_refused_with_the_usage(argv: list[str]) -> None:
    with pytest.raises(SystemExit, match="kubectl limitguard"):
        limitguard_argv(argv, {})


def test_a_flag_without_its_value_is_refused() -> None:
    with pytest.raises(SystemExit, match="flag needs an argument: --context"):
        split_kubectl_flags(["audit", "--context"])
