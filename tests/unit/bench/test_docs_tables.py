"""Every table of measured figures the docs mark with `<!-- bench: COMMAND -->` has the shape
`bench.tables` prints - the header, then one row a figure with its median, spread and number of
runs - and names a bench that exists, so a new run's rows can be pasted over the old ones and
compared. Rows of fewer than three runs say so in their `runs` cell."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.tables import HEADER, median_row, median_table
from tests.support import REPO

PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
MARKER = re.compile(r"^<!-- bench: (?P<command>.+?) -->$")
NUMBER = r"[0-9][0-9,]*(\.[0-9]+)?"


def marked_tables() -> list[tuple[Path, str, list[str]]]:
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        for index, line in enumerate(lines):
            marker = MARKER.match(line)
            if marker is None:
                continue
            table = []
            for row in lines[index + 1 :]:
                if row.startswith("|"):
                    table.append(row)
                elif table:
                    break
            found.append((page, marker["command"], table))
    return found


def test_the_docs_have_marked_tables() -> None:
    assert marked_tables()


@pytest.mark.parametrize(("page", "command", "table"), marked_tables(), ids=lambda v: getattr(v, "name", ""))
def test_a_marked_table_has_the_shape_its_bench_prints(page: Path, command: str, table: list[str]) -> None:
    printed = median_table(command, {"x": [1.0, 2.0, 3.0]}).splitlines()
    assert table[:2] == printed[2:4], f"{page.name}: the header is not bench.tables'"
    module = re.fullmatch(r"python -m bench\.(\w+)( .*)?", command)
    assert module is not None and (REPO / "bench" / f"{module[1]}.py").exists(), command
    for row in table[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == len(HEADER), row
        _figure, median, spread, runs = cells
        assert re.fullmatch(NUMBER, median), row
        assert int(runs) >= 1, row
        assert spread == "-" if int(runs) == 1 else re.fullmatch(f"{NUMBER}-{NUMBER}", spread), row


def test_a_row_is_the_median_of_its_runs_with_their_spread() -> None:
    assert median_row("rate", [1205.4, 1100.0, 1300.2]) == "| rate | 1,205 | 1,100-1,300 | 3 |"
    assert median_row("ratio", [0.42], digits=2) == "| ratio | 0.42 | - | 1 |"
    assert (
        median_row("even", [1, 2, 3, 10]) == "| even | 2 | 1-10 | 4 |"
    )  # median of 2 and 3: 2.5, shown as 2
