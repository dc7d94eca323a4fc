"""Fixtures of the command-line tests: a store target on each backend, and a runner."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner, Result

from memcommit.cli import main


@pytest.fixture
def target(make_store, store_backend, tmp_path, request) -> str:
    """A new store's --store text: a SQLite file, or a PostgreSQL URL naming a fresh schema."""
    store = make_store("cli.db")  # make_store drops the schema after the test
    if store_backend == "sqlite":
        text = str(tmp_path / "cli.db")
    else:
        text = f"{request.getfixturevalue('postgres_server')}?schema={store.backend.schema}"
    store.close()
    return text


class Cli:
    """``memcommit ...`` through click's runner, with the store and tenant filled in."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.runner = CliRunner()

    def __call__(self, *args: str, code: int = 0, tenant: str | None = None, **kw) -> Result:
        more = ["--store", self.target] + (["--tenant", tenant] if tenant else [])
        result = self.runner.invoke(main, [*args, *more], **kw)
        assert result.exit_code == code, result.output
        return result

    def json(self, *args: str, **kw):
        return json.loads(self(*args, "--json", **kw).stdout)


@pytest.fixture
def cli(target) -> Cli:
    return Cli(target)
