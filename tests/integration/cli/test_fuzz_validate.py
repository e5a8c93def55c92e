"""`limitguard validate` against hostile files: random YAML, alias bombs, binary data, 50 MB.

Each case runs the real command in a child process and must end with a clear message, no
traceback, and exit code 1 or 2. The child runs under a 1 GiB address-space limit: a command that
tried to load the whole input would die there (MemoryError) instead of taking the machine with it.
The wait for the child is a hang guard only; how long it takes and how much memory it uses are
measured by bench/fuzz.py, next to a baseline.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import subprocess
import sys
import tempfile
import threading
from contextlib import redirect_stderr, redirect_stdout

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from limitguard.cli import validate as cli
from limitguard.testing.hostile import FIFTY_MEGABYTES_OF_STDIN, billion_laughs, write_fifty_megabytes
from tests.support import HANG_GUARD_SECONDS, REPO

RANDOM_DOCUMENTS = 300
ADDRESS_SPACE_LIMIT = 1 << 30  # a crash guard, not a measurement (the command peaks near 85 MiB)


def run_child(*paths: str, stdin: bytes | None = None) -> tuple[int, str]:
    """`limitguard validate PATHS` in a child process: exit code and combined output."""

    def limit_address_space() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))

    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen(
            [sys.executable, "-m", "limitguard", "validate", *paths],
            stdin=subprocess.PIPE,
            stdout=output,
            stderr=subprocess.STDOUT,
            preexec_fn=limit_address_space,
            cwd=REPO,
        )
        feeder = threading.Thread(target=_feed, args=(child, stdin or b""), daemon=True)
        feeder.start()
        try:
            code = child.wait(timeout=HANG_GUARD_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
            raise AssertionError(
                f"hang guard: validate still running after {HANG_GUARD_SECONDS:g}s"
            ) from None
        feeder.join(timeout=HANG_GUARD_SECONDS)
        output.seek(0)
        return code, output.read().decode(errors="replace")


def _feed(child: subprocess.Popen, data: bytes) -> None:
    """Write stdin in the background; the child may stop reading early (that is the point)."""
    assert child.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):
        child.stdin.write(data)
    with contextlib.suppress(BrokenPipeError, OSError):
        child.stdin.close()


def run_in_process(path: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        code = cli.run(parser.parse_args([path]))
    return code, out.getvalue()


yaml_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
random_texts = st.one_of(
    yaml_values.map(lambda value: yaml.safe_dump(value, allow_unicode=True)),
    st.text(max_size=400),
    st.builds(
        lambda value: (
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            + yaml.safe_dump({"profiles": value})
        ),
        yaml_values,
    ),
)


@settings(
    max_examples=RANDOM_DOCUMENTS,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=random_texts)
def test_random_yaml_gets_a_clear_verdict(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "input.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    code, output = run_in_process(str(path))
    assert code in (0, 1), output  # a random profiles list can be a valid (empty) configuration
    assert "input.yaml" in output
    assert "Traceback" not in output


def test_billion_laughs_is_refused_with_a_clear_error(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs())
    code, output = run_child(str(bomb))
    assert code == 1
    assert "bomb.yaml" in output and "alias" in output.lower()
    assert "Traceback" not in output and "MemoryError" not in output


def test_binary_file_is_refused(tmp_path):
    binary = tmp_path / "random.bin"
    binary.write_bytes(os.urandom(4096) + b"\x00KubeSchedulerConfiguration\x00")
    code, output = run_child(str(binary))
    assert code == 1
    assert "random.bin" in output and "Traceback" not in output


def test_fifty_megabyte_file_is_refused_without_loading_it(tmp_path):
    huge = tmp_path / "huge.yaml"
    write_fifty_megabytes(huge)
    code, output = run_child(str(huge))
    assert code == 1
    assert "huge.yaml" in output and "limit" in output
    assert "Traceback" not in output and "MemoryError" not in output


def test_fifty_megabytes_on_stdin_too():
    code, output = run_child("-", stdin=FIFTY_MEGABYTES_OF_STDIN)
    assert code == 1 and "limit" in output
    assert "Traceback" not in output and "MemoryError" not in output


def test_unreadable_and_missing_files_exit_2(tmp_path):
    code, output = run_child(str(tmp_path / "missing.yaml"))
    assert code == 2 and "missing.yaml" in output and "Traceback" not in output
    code, output = run_child(str(tmp_path))  # a directory
    assert code == 2 and "Traceback" not in output
