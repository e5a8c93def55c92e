"""Output the user pages quote is the output the program prints: a grep for a documented text finds
the real one."""

from __future__ import annotations

import re

import pytest

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
