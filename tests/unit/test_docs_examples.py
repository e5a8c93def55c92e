"""Output the user pages quote is the output the program prints: a grep for a documented text finds
the real one."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from limitguard.cli.main import main
from limitguard.core.pools import DEFAULT
from limitguard.extender.service import failure_reason
from tests.support import REPO

DOCS = REPO / "docs"


def console_block(page: str, command: str) -> list[str]:
    """The lines a ```console block of *page* shows after `$ command`, up to the next `$` line."""
    text = (DOCS / page).read_text()
    start = text.index(f"$ {command}\n") + len(f"$ {command}\n")
    shown = text[start : text.index("\n$ ", start)]
    return shown.splitlines()


def test_extender_md_quotes_the_audit_output(capsys: pytest.CaptureFixture[str]) -> None:
    command = "limitguard audit --cluster tests/integration/cli/cluster.yaml --config tests/integration/cli/config.yaml"
    argv = [str(REPO / part) if part.startswith("tests/") else part for part in command.split()[1:]]
    assert main(argv) == 1
    assert capsys.readouterr().out.splitlines() == console_block("extender.md", command)


def test_troubleshooting_quotes_the_extenders_failure_reason() -> None:
    documented = re.search(
        r"`\.\.\. (limit-to-allocatable ratio exceeded \([^`]*\))` \(from the extender",
        (DOCS / "troubleshooting.md").read_text(),
    )
    assert documented is not None
    assert documented.group(1) == failure_reason(["cpu"], DEFAULT.describe())


def test_the_second_schedulers_alert_rules_pass_promtool(tmp_path: Path) -> None:
    """observability.md's PrometheusRule for the second scheduler is valid Prometheus rules."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip(
            "promtool is not installed (`make tools` fetches it when Debian's package lists are reachable)"
        )
    blocks = re.findall(r"```yaml\n(.*?)```", (DOCS / "observability.md").read_text(), re.S)
    documents = [doc for block in blocks for doc in yaml.safe_load_all(block) if isinstance(doc, dict)]
    [rule] = [doc for doc in documents if doc.get("kind") == "PrometheusRule"]
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(rule["spec"]))
    checked = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 3 rules found" in checked.stdout
    [monitor] = [doc for doc in documents if doc.get("kind") == "PodMonitor"]
    assert monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"] == "scheduler"
