"""``memcommit demo``: the poolsplit chapter shows starvation, crowding-out and both fixes."""

from __future__ import annotations

import re

from click.testing import CliRunner
from rich.console import Console

from memcommit.cli import main
from memcommit.cli.demo import poolsplit_story


def row(output: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is ``first_cell``."""
    for line in re.sub(r"\x1b\[[0-9;]*m", "", output).splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line) if c.strip()]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{output}")


def test_demo_counts_type_loads_and_the_crowded_out_correction():
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    out = result.output
    # type, memories, one budget, pools + always-scope
    assert row(out, "fact") == ["fact", "8", "8 / 8", "8 / 8"]
    assert row(out, "procedure") == ["procedure", "4", "0 / 8", "8 / 8"]
    assert row(out, "note") == ["note", "3", "0 / 8", "8 / 8"]
    assert row(out, "correction") == ["correction", "1", "2 / 8", "8 / 8"]
    # fresh memories, one budget: correction loaded, pools + always-scope: correction loaded
    assert row(out, "0") == ["0", "yes", "yes"]
    assert row(out, "3") == ["3", "yes", "yes"]
    for burst in ("6", "12", "24"):
        assert row(out, burst) == [burst, "no", "yes"]


def test_the_chapter_is_deterministic():
    def told() -> str:
        console = Console(record=True, width=100)
        poolsplit_story(console)
        return console.export_text()

    assert told() == told()


def test_the_chapter_prints_on_any_console():
    console = Console(record=True, width=100)
    poolsplit_story(console)
    assert "Reserved pools" in console.export_text()
