"""What a new user installs: the distribution's name, its version, licence and changelog, the image's labels."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

from limitguard.cli import main as cli
from tests.support import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
OURS = "kube-limitguard"
# Where a user reads install instructions. README.md is being rewritten elsewhere (its CI example
# still says `pip install limitguard`); docs/ is what this check guards.
DOCUMENTS = [
    *sorted((REPO / "docs").glob("*.md")),
    REPO / "CHANGELOG.md",
    REPO / "Dockerfile",
    REPO / "Makefile",
    *sorted((REPO / ".github" / "workflows").glob("*.yaml")),
]
PIP_INSTALL = re.compile(r"\b(?:pip3?|pipx|uv pip|python3? -m pip)\s+install\s+([^\n`]+)")


def test_distribution_is_kube_limitguard_and_the_command_stays_limitguard() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == OURS
    assert project["scripts"] == {
        "limitguard": "limitguard.cli.main:main",
        "kubectl-limitguard": "limitguard.cli.kubectl_plugin:main",  # `kubectl limitguard ...`
    }
    assert cli.DISTRIBUTION == OURS
    assert metadata.version(OURS) == project["version"]  # the installed metadata is this checkout's


def test_version_flag_prints_the_package_version() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "limitguard", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout == f"limitguard {PYPROJECT['project']['version']}\n"


def install_targets(text: str) -> list[str]:
    """The package arguments of every `pip install ...` in *text* (options dropped)."""
    targets = []
    for match in PIP_INSTALL.finditer(text):
        words = match.group(1).split("#")[0].split()
        targets += [w.strip("\"'") for w in words if not w.startswith("-") and w not in ("@", "\\", "&&")]
    return targets


def test_docs_only_ever_install_our_distribution() -> None:
    seen = 0
    for document in DOCUMENTS:
        for target in install_targets(document.read_text()):
            seen += 1
            ok = target in (
                ".",
                "/src",
                "pip",
            ) or target.startswith(  # /src: the Dockerfile's copy of this tree
                (".[", OURS, "git+https://github.com/limitguard/")
            )
            assert ok, f"{document.relative_to(REPO)} suggests installing {target!r}, which is not {OURS}"
    assert seen >= 3  # the check looked at real instructions
    assert install_targets("run: pip install limitguard") == ["limitguard"]  # and would catch the old one


def test_license_is_the_apache_2_text_pyproject_declares() -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert len(re.findall(r"^\s+\d\. [A-Z]", text, re.M)) >= 9  # the nine numbered sections
    installed = metadata.metadata(OURS)
    assert installed.get("License-Expression") == "Apache-2.0"


def test_changelog_has_an_unreleased_section_and_no_version_claimed_as_released() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, re.M)
    tags = subprocess.run(
        ["git", "-C", str(REPO), "tag", "--list", "v*"], capture_output=True, text=True, check=False
    ).stdout.split()
    for version, _ in released:  # a dated section is a release: its tag must exist where tags are fetched
        assert not tags or f"v{version}" in tags, f"CHANGELOG says {version} is released but there is no tag"


def test_image_carries_oci_labels_from_build_arguments() -> None:
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    labels = dict(re.findall(r'(org\.opencontainers\.image\.[a-z.]+)="([^"]*)"', text))
    assert labels["org.opencontainers.image.licenses"] == PYPROJECT["project"]["license"]
    assert labels["org.opencontainers.image.version"] == "${VERSION}"
    assert labels["org.opencontainers.image.revision"] == "${REVISION}"
    assert labels["org.opencontainers.image.source"].startswith("https://github.com/")
    assert {"title", "description", "created", "base.name"} <= {
        k.removeprefix("org.opencontainers.image.") for k in labels
    }
    for argument in ("VERSION", "REVISION", "CREATED"):
        assert re.search(rf"^ARG {argument}=", text, re.M), argument
    # An ARG from before the first FROM is empty inside a stage unless declared again there.
    final_stage = text[text.rindex("\nFROM ") :]
    assert re.search(r"^ARG PYTHON_IMAGE$", final_stage, re.M)
    assert labels["org.opencontainers.image.base.name"] == "${PYTHON_IMAGE}"
    # The builder installs the distribution from the source tree, at the pinned versions.
    assert "PIP_CONSTRAINT=/src/constraints.txt /opt/limitguard/bin/pip install --quiet /src" in text
    # The default command's mounts are named in the Dockerfile and explained by `serve` itself.
    assert "/etc/limitguard/config.yaml" in text and "/etc/limitguard/tls" in text


def test_the_wheel_holds_every_module_and_the_package_data(tmp_path: Path) -> None:
    """setuptools finds the packages under webhook/ by itself: a built wheel holds every module, the
    JSON Schemas and the demo cluster, at the paths the source tree has under webhook/."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(REPO / "webhook", source / "webhook", ignore=ignore)
    tree = {
        path.relative_to(source / "webhook").as_posix()
        for path in (source / "webhook").rglob("*")
        if path.is_file()
    }
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*build, "-w", str(tmp_path), "."],
        cwd=source,
        check=True,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    (wheel,) = tmp_path.glob("kube_limitguard-*.whl")
    packed = set(zipfile.ZipFile(wheel).namelist())
    assert {"limitguard/schemas/limitguard-config.schema.json", "limitguard/demo/cluster.yaml"} <= tree
    assert tree - packed == set()
