"""`limitguard serve` applies the release of its configuration's kubernetesVersion before counting
any pod, says which and why at start-up, and validates scheduler ConfigMaps for it by default; in
file mode without the key, the newest supported release (1.37)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pytest

from limitguard.cli.serve import add_arguments
from limitguard.cli.startup import start_serve
from limitguard.core.kubeversion import DEFAULT_MINOR
from tests.support import REPO

DEMO = REPO / "webhook" / "limitguard" / "demo" / "cluster.yaml"
HEADER = "apiVersion: limitguard.io/v1alpha1\nkind: LimitGuardConfiguration\n"


def serve_args(tmp_path: Path, config_body: str) -> argparse.Namespace:
    config = tmp_path / "config.yaml"
    config.write_text(HEADER + config_body)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(
        [
            *("--cluster", str(DEMO), "--config", str(config)),
            *("--cert-dir", str(tmp_path / "tls"), "--host", "127.0.0.1", "--port", "0"),
        ]
    )


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


async def test_the_configured_release_applies_and_is_logged(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.INFO)
    running = await start_serve(serve_args(tmp_path, 'kubernetesVersion: "v1.36.3"\n'), {})
    try:
        assert running.services.state.pod_rules.minor == 36
        started = [r for r in caplog.records if r.getMessage() == "pod rules of Kubernetes 1.36 apply"]
        config = tmp_path / "config.yaml"
        assert started and started[0].because == f"kubernetesVersion 'v1.36.3' configured in {config}"
        validated = [
            r
            for r in caplog.records
            if r.getMessage() == "scheduler configurations are validated for Kubernetes 1.36"
        ]
        assert validated and validated[0].because == f"kubernetesVersion 'v1.36.3' configured in {config}"
    finally:
        await running.stop()


async def test_configmaps_are_validated_for_the_kube_scheduler_release_the_setting_names(
    tmp_path: Path, caplog
) -> None:
    """schedulerConfigValidation.scheduler kube-scheduler@v1.33.0: its release, not the newest."""
    caplog.set_level(logging.INFO)
    body = "schedulerConfigValidation:\n  scheduler: kube-scheduler@v1.33.0\n"
    running = await start_serve(serve_args(tmp_path, body), {})
    try:
        validated = [
            r
            for r in caplog.records
            if r.getMessage() == "scheduler configurations are validated for Kubernetes 1.33"
        ]
        assert validated and validated[0].because == "kube-scheduler v1.33.0 is Kubernetes 1.33"
        assert running.services.state.pod_rules.minor == DEFAULT_MINOR  # the pods' release is another
    finally:
        await running.stop()


async def test_file_mode_without_the_key_uses_the_newest(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.INFO)
    running = await start_serve(serve_args(tmp_path, "limitAware: {}\n"), {})
    try:
        assert running.services.state.pod_rules.minor == DEFAULT_MINOR
        assert "pod rules of Kubernetes 1.37 apply" in messages(caplog)
    finally:
        await running.stop()


async def test_a_release_outside_the_range_is_clamped_with_a_warning(tmp_path: Path, caplog) -> None:
    caplog.set_level(logging.INFO)
    running = await start_serve(serve_args(tmp_path, 'kubernetesVersion: "1.29"\n'), {})
    try:
        assert running.services.state.pod_rules.minor == 31
        assert any("outside the supported 1.31-1.37" in m for m in messages(caplog))
    finally:
        await running.stop()
