"""The ``memcommit`` command line: one module per group of commands."""

# Importing each module registers its commands on `main`.
from memcommit.cli import (  # noqa: F401
    compact_cmds,
    demo,
    mcp_cmds,
    migrate_cmds,
    recall_cmds,
    store_cmds,
    tiers_cmds,
    trace_cmds,
    transfer_cmds,
    workbench_cmds,
    write_cmds,
)
from memcommit.cli.app import main

__all__ = ["main"]
