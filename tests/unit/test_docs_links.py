"""The user documentation holds together: every relative link reaches a file, every `#anchor` a
heading (or an HTML anchor) of its target, the CLI reference names every option the commands take,
and no page talks about how the project is organised instead of about limitguard.

Anchors follow GitHub's heading ids (github-slugger, which github.com uses): the heading's text
lowercased, characters other than letters, digits, `_`, `-` and spaces dropped, spaces turned into
`-`, and a repeated id suffixed `-1`, `-2`, ...
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from limitguard.cli.main import SUBCOMMANDS, build_parser
from tests.support import REPO

PAGES = sorted(
    [
        REPO / "README.md",
        REPO / "CHANGELOG.md",
        *(REPO / "docs").rglob("*.md"),
        *(REPO / "charts").rglob("README.md"),
        REPO / "schemas" / "README.md",
    ]
)
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*([^)\s]+)")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
INLINE_CODE = re.compile(r"`[^`]*`")
# "SPEC" in capitals (the pod's `spec` is fine), "issue 16", "issue #30", "issues 3 and 4".
PROCESS_WORDS = re.compile(r"\bSPEC\b|(?i:\bissues?\s*#?\s*\d+)")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's id for a heading's source text (markup removed as it renders)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = text.lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "_- ")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found: set[str] = set()
    for _, line in prose_lines(page.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            found.add(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
        found.update(HTML_ANCHOR.findall(line))
    return found


def links(page: Path) -> list[tuple[int, str]]:
    found = []
    for number, line in prose_lines(page.read_text(encoding="utf-8")):
        line = INLINE_CODE.sub("", line)
        found += [(number, target) for target in LINK.findall(line)]
        found += [(number, target) for target in IMAGE.findall(line)]
    return found


def test_the_walk_finds_the_pages_and_their_links() -> None:
    """Guards the walk itself: the pages exist and the patterns see links and anchors in them."""
    names = {page.relative_to(REPO).as_posix() for page in PAGES}
    assert {"README.md", "docs/helm.md", "docs/rollout.md", "docs/comparison.md"} <= names
    rollout_targets = {target for _, target in links(REPO / "docs" / "rollout.md")}
    assert "extender.md#the-scheduler-extender" in rollout_targets
    assert "the-configmap-webhook" in anchors(REPO / "docs" / "validator.md")
    assert "limitguardnoleader" in anchors(REPO / "docs" / "observability.md")  # an HTML anchor


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("`limitguard audit`", "limitguard-audit"),
        ("Mutating webhook: `POST /mutate`", "mutating-webhook-post-mutate"),
        ("1. Audit: what would be denied today", "1-audit-what-would-be-denied-today"),
        ("Goals (1.37) on this machine", "goals-137-on-this-machine"),
        ("Where [the design](x.md) and Kubernetes differ", "where-the-design-and-kubernetes-differ"),
        ("replica_metrics and **bold**", "replica_metrics-and-bold"),
    ],
)
def test_slugs_follow_githubs_rules(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_repeated_headings_get_numbered_ids(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n## Usage\n```\n## Usage\n```\n## Usage\n## Usage\n")
    assert anchors(page) == {"title", "usage", "usage-1", "usage-2"}


def broken_links(page: Path) -> list[str]:
    broken = []
    for number, target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
            continue
        path_part, _, anchor = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            broken.append(f"line {number}: {target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"line {number}: {target}: no heading #{anchor} in {destination.name}")
    return broken


def test_a_missing_file_or_heading_is_reported(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n## The part\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n[ok](other.md#the-part) [ok](#page) [web](https://example.com/x#y)\n"
        "[gone](missing.md) [wrong](other.md#webhook) `[code](nowhere.md)`\n"
        "```\n[fenced](nowhere.md)\n```\n"
    )
    assert broken_links(page) == [
        "line 3: missing.md: no such file",
        "line 3: other.md#webhook: no heading #webhook in other.md",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = broken_links(page)
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_no_page_talks_about_how_the_project_is_run(page: Path) -> None:
    found = [
        f"line {number}: {line.strip()}"
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if PROCESS_WORDS.search(line)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_the_cli_reference_names_every_option(command: str) -> None:
    """docs/configuration.md's command-line table row for a command names each of its options."""
    parser = build_parser(command)
    (subparsers,) = [action for action in parser._actions if action.choices and command in action.choices]
    options = {
        max(action.option_strings, key=len)
        for action in subparsers.choices[command]._actions
        if action.option_strings and action.dest != "help"
    }
    rows = [
        line
        for _, line in prose_lines((REPO / "docs" / "configuration.md").read_text(encoding="utf-8"))
        if line.startswith("| ") and f"`limitguard {command}" in line.split("|")[1]
    ]
    assert rows, f"no row for limitguard {command}"
    documented = " ".join(rows)
    missing = sorted(
        option for option in options if not re.search(rf"`[^`]*{re.escape(option)}\b", documented)
    )
    assert not missing, f"limitguard {command}: {missing} not in docs/configuration.md"
