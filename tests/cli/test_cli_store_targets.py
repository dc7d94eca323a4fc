"""A store named wrongly gets one clear line: a missing folder, a file that is not a store."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import memcommit
from memcommit.cli import main
from memcommit.errors import InvalidInput


def said(target: str, reason: str) -> str:
    """The line the command line prints for this refusal (long values are shortened)."""
    return f"error: {InvalidInput('store', target, reason)}"


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.splitlines()
    return line


def test_a_store_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    target = str(tmp_path / "nope" / "memories.db")
    folder = repr(str(tmp_path / "nope"))
    assert run("find", "--store", target) == said(
        target, f"no such store, and no folder {folder} for one"
    )
    for command in (["init"], ["add", "hello"]):
        line = run(*command, "--store", target)
        assert line == said(target, f"its folder {folder} does not exist: create it first")
    assert not (tmp_path / "nope").exists()
    with pytest.raises(InvalidInput) as err:
        memcommit.open(target)
    assert err.value.field == "store"


def test_a_file_that_is_not_a_store_is_named(tmp_path: Path) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("# not a database, only notes\n" * 20)
    for command in (["find"], ["add", "hello"]):
        line = run(*command, "--store", str(notes))
        assert line == said(str(notes), "is not a memcommit store (not SQLite)")
    assert notes.read_text().startswith("# not a database")


def test_migrating_into_a_store_that_holds_commits_names_it(tmp_path: Path) -> None:
    source, full = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    for path in (source, full):
        with memcommit.open(path) as store, store.commit() as tx:
            tx.add("something")
    line = run("migrate", source, full)
    assert line.endswith(": holds 1 commit(s): import only into a new, empty store")
    assert line == said(full, "holds 1 commit(s): import only into a new, empty store")
