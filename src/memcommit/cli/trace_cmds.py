"""``memcommit trace begin | step | finish``: record a task as a trace, one commit each.

A trace is a task root plus ordered steps; finished traces are what ``memcommit
compact`` turns into summaries. The trace id is its root memory's id (short
forms work, as for any memory).
"""

from __future__ import annotations

import click

from memcommit.cli.app import console, handle_errors, main, print_json
from memcommit.cli.ids import resolve_memory
from memcommit.cli.opening import opened
from memcommit.cli.write_cmds import commit_options
from memcommit.model import KINDS
from memcommit.store.transaction import TRACE_ENDINGS


def _commit_json(tx) -> dict:
    return {"seq": tx.result.seq, "id": tx.result.id}


@main.group("trace")
def trace_group() -> None:
    """Record a task as a trace: begin it, add its steps, finish it.

    Example:

        memcommit trace begin "Fix the flaky checkout test"
    """


@trace_group.command("begin")
@click.argument("task")
@click.option("--scope", default="shared", show_default=True, help="Partition of the trace.")
@click.option("--session", help="Session the trace belongs to.")
@click.option(
    "--kind", type=click.Choice(KINDS), default="event", show_default=True, help="Root's kind."
)
@commit_options
@handle_errors
def begin_cmd(
    task: str, scope: str, session: str | None, kind: str, message: str | None, author: str,
    tenant: str, store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Start a trace for TASK (Transaction.begin_trace); prints its id.

    Example:

        memcommit trace begin "Fix the flaky checkout test" --scope planner --json
    """
    # (never the task's text: a commit message outlives a purge of the trace's root)
    text = message if message is not None else "begin trace"
    with (
        opened(store_target, tenant, create=True) as view,
        view.commit(message=text, author=author) as tx,
    ):
        trace_id = tx.begin_trace(task, scope=scope, session=session, kind=kind)
    if as_json:
        print_json({"trace": trace_id, "commit": _commit_json(tx)})
    else:
        console().print(f"began trace {trace_id} in commit {tx.result.seq}")


@trace_group.command("step")
@click.argument("trace_id")
@click.argument("content")
@click.option(
    "--kind", type=click.Choice(KINDS), default="event", show_default=True, help="Step's kind."
)
@click.option("--importance", type=float, default=0.5, show_default=True, help="From 0 to 1.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeat for more).")
@commit_options
@handle_errors
def step_cmd(
    trace_id: str, content: str, kind: str, importance: float, tags: tuple[str, ...],
    message: str | None, author: str, tenant: str, store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Append the next step to an open trace (Transaction.step).

    Example:

        memcommit trace step …4be01f3 "Read the logs: the mock answered after the timeout"
    """
    with opened(store_target, tenant, write=True) as view:
        full = resolve_memory(view, trace_id, field="trace_id")
        text = message if message is not None else f"step of {full}"
        with view.commit(message=text, author=author) as tx:
            step = tx.step(full, content, kind=kind, importance=importance, tags=tags)
    if as_json:
        print_json({"trace": full, "memory": step, "commit": _commit_json(tx)})
    else:
        console().print(f"step {step.step} of trace {full}: {step.id} in commit {tx.result.seq}")


@trace_group.command("finish")
@click.argument("trace_id")
@click.option("--status", type=click.Choice(TRACE_ENDINGS), default="finished", show_default=True)
@commit_options
@handle_errors
def finish_cmd(
    trace_id: str, status: str, message: str | None, author: str, tenant: str,
    store_target: str, as_json: bool,
) -> None:  # fmt: skip
    """Close an open trace as finished or failed (Transaction.finish).

    Example:

        memcommit trace finish …4be01f3 --status failed
    """
    with opened(store_target, tenant, write=True) as view:
        full = resolve_memory(view, trace_id, field="trace_id")
        text = message if message is not None else f"{status} trace {full}"
        with view.commit(message=text, author=author) as tx:
            tx.finish(full, status=status)
    if as_json:
        print_json({"trace": full, "status": status, "commit": _commit_json(tx)})
    else:
        console().print(f"trace {full} {status} in commit {tx.result.seq}")
