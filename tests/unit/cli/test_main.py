"""The command line's shape: commands import lazily, and every package folder ships."""

from __future__ import annotations

import subprocess
import sys

from tests.support import REPO

PROBE = """
import sys
from limitguard.cli.main import main
try:
    main([{argv}])
except SystemExit:
    pass
print("loaded:" + ",".join(sorted(m for m in ("aiohttp", "kubernetes", "prometheus_client", "limitguard.http.app") if m in sys.modules)))
"""


def loaded_after(*argv: str) -> str:
    code = PROBE.format(argv=", ".join(repr(word) for word in argv))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return result.stdout.rsplit("loaded:", 1)[1].strip()


def test_validate_does_not_pay_for_the_server():
    assert loaded_after("validate", "--help") == ""


def test_top_level_help_imports_no_command():
    assert loaded_after("--help") == ""


def test_serve_loads_the_server():
    assert "aiohttp" in loaded_after("serve", "--help")


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    """`limitguard validate ... | head -1`: no BrokenPipeError traceback on stderr."""
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    files = [str(config)] * 2000  # far more output than one pipe buffer
    child = subprocess.Popen(
        [sys.executable, "-m", "limitguard", "validate", *files],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert child.stdout is not None
    child.stdout.readline()
    child.stdout.close()  # the reader goes away, as `head -1` does
    _, stderr = child.communicate(timeout=120)
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr
    assert child.returncode == 1
