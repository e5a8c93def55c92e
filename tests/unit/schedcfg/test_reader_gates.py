"""--feature-gates and the webhook's gates are judged at the reading scheduler's own Kubernetes minor
(koord-scheduler v1.8: 1.35, scheduler-plugins v0.34: 1.34; schedulers.py), not the cluster's (issue 28).

Gate facts (rules/gates.py): GangScheduling exists 1.35-1.36 (gone in 1.37, the default release);
DynamicResourceAllocation is locked to true from 1.35 (settable in 1.34)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from limitguard.admission.configmaps import configmap_check, configmap_release
from limitguard.cli.validate import EXIT_INVALID, EXIT_OK, EXIT_USAGE, main

KOORD = {  # Reservation is registered only by koord-scheduler: detection names it
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "koord", "plugins": {"reserve": {"enabled": [{"name": "Reservation"}]}}}],
}
KUBE = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler"}],
}


def _file(tmp_path: Path, config: dict[str, Any], name: str = "c.yaml") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


def _json(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return json.loads(capsys.readouterr().out)


def test_cli_named_koord_scheduler_accepts_a_gate_only_its_release_knows(tmp_path, capsys) -> None:
    """GangScheduling is unknown to kube-scheduler 1.37 (the default) but koord-scheduler is 1.35."""
    argv = [
        _file(tmp_path, KOORD),
        "--scheduler",
        "koord-scheduler",
        "--feature-gates",
        "GangScheduling=true",
    ]
    assert main(argv) == EXIT_OK
    assert main([*argv[:2], "kube-scheduler", *argv[3:]]) == EXIT_USAGE
    assert "unrecognized feature gate: GangScheduling" in capsys.readouterr().err


def test_cli_named_koord_scheduler_refuses_a_gate_locked_in_its_release(tmp_path, capsys) -> None:
    """DynamicResourceAllocation=false: kube-scheduler 1.33 takes it, koord-scheduler (1.35) does not."""
    path = _file(tmp_path, KOORD)
    gates = ["--kubernetes-version", "1.33", "--feature-gates", "DynamicResourceAllocation=false"]
    assert main([path, "--scheduler", "koord-scheduler", *gates]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "koord-scheduler v1.8.0 (Kubernetes 1.35)" in err and "locked to true in Kubernetes 1.35" in err
    # scheduler-plugins v0.34 is 1.34, where the gate is not locked yet
    assert main(
        [path, "--scheduler", "scheduler-plugins", "--feature-gates", "DynamicResourceAllocation=false"]
    ) in (
        EXIT_OK,
        EXIT_INVALID,
    )
    assert "locked" not in capsys.readouterr().err


def test_cli_auto_judges_gates_per_file_at_the_detected_reader(tmp_path, capsys) -> None:
    koord, kube = _file(tmp_path, KOORD, "koord.yaml"), _file(tmp_path, KUBE, "kube.yaml")
    gates = ["--feature-gates", "GangScheduling=true", "-o", "json"]
    assert main([koord, *gates]) == EXIT_OK
    assert _json(capsys)["files"][0]["errors"] == []
    assert main([kube, *gates]) == EXIT_INVALID
    (error,) = _json(capsys)["files"][0]["errors"]
    assert error["rule"] == "feature-gates.reader"
    assert (
        "feature gates of kube-scheduler 1.37: unrecognized feature gate: GangScheduling" in error["message"]
    )
    assert main(
        [koord, "--kubernetes-version", "1.33", "--feature-gates", "DynamicResourceAllocation=false"]
    ) == (EXIT_INVALID)
    assert "feature gates of koord-scheduler v1.8.0 (Kubernetes 1.35)" in capsys.readouterr().out


def test_webhook_under_koord_scheduler_applies_and_names_1_35() -> None:
    """A cluster outside the range is not clamped for koord-scheduler: 1.35 applies and the note says so."""
    release, why = configmap_release(None, {"GangScheduling": True}, "v1.40.0", "koord-scheduler")
    assert release.minor == 35 and dict(release.overrides) == {"GangScheduling": True}
    assert release.note is None and why == "koord-scheduler v1.8.0 is Kubernetes 1.35"
    release, _ = configmap_release("1.33", {"DynamicResourceAllocation": False}, None, "koord-scheduler")
    assert release.minor == 35 and dict(release.overrides) == {}
    assert release.note is not None and "locked to true in Kubernetes 1.35" in release.note
    sigs, why = configmap_release(None, {"DynamicResourceAllocation": False}, "v1.37.0", "scheduler-plugins")
    assert sigs.minor == 34 and dict(sigs.overrides) == {"DynamicResourceAllocation": False}
    assert why == "scheduler-plugins v0.34.7 is Kubernetes 1.34"


def _configmap(config: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "sched", "namespace": "kube-system"},
        "data": {"config.yaml": json.dumps(config)},
    }


def test_configmap_review_under_koord_scheduler_carries_the_applied_release() -> None:
    release, _ = configmap_release("1.33", {"DynamicResourceAllocation": False}, None, "koord-scheduler")
    response = configmap_check(_configmap(KOORD), release=release, scheduler="koord-scheduler")
    assert response is not None and response.allowed
    assert any("ignored by koord-scheduler v1.8.0 (Kubernetes 1.35)" in w for w in response.warnings)


def test_configmap_review_auto_warns_of_gates_the_detected_reader_refuses() -> None:
    """Gates kept at the cluster's 1.33 but refused by the koord-scheduler reading this ConfigMap: a
    warning (the server's setting is not the ConfigMap's fault), the verdict still allows."""
    release, _ = configmap_release("1.33", {"DynamicResourceAllocation": False})
    assert dict(release.overrides) == {"DynamicResourceAllocation": False}
    response = configmap_check(_configmap(KOORD), release=release)
    assert response is not None and response.allowed
    assert any("feature gates of koord-scheduler v1.8.0 (Kubernetes 1.35)" in w for w in response.warnings)
    plain = configmap_check(_configmap(KUBE), release=release)
    assert plain is not None and not any("feature gates of" in w for w in plain.warnings)


def test_the_clamp_note_names_the_release_a_detected_reader_applies() -> None:
    """A 1.40 cluster clamps to 1.37, but an auto-detected koord-scheduler ConfigMap is judged at 1.35."""
    release, _ = configmap_release(None, {}, "v1.40.0")
    assert release.minor == 37 and release.note is not None
    koord = configmap_check(_configmap(KOORD), release=release)
    assert koord is not None
    assert koord.warnings[0].startswith(
        "limitguard: rules of Kubernetes 1.35 applied (koord-scheduler v1.8.0); server release:"
    )
    kube = configmap_check(_configmap(KUBE), release=release)
    assert kube is not None and kube.warnings[0] == f"limitguard: {release.note}"
