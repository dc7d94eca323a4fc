"""One recall, three spellings: the Python API, the CLI's flags and the MCP tool's arguments
give the same RecallOptions and the same Context."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

import memcommit
from memcommit.cli.recall_cmds import recall_cmd, recall_options
from memcommit.errors import InvalidInput
from memcommit.interfaces import agent
from memcommit.recall import Pool, RecallOptions, Words, recall

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
QUERY = "deploy migration checklist"


@pytest.fixture
def seeded(cli):
    """The CLI's store, seeded by two commits a week apart: facts, events, a correction."""
    times = iter([NOW - timedelta(days=9), NOW - timedelta(days=2)])
    clock_now = [next(times)]
    with memcommit.open(cli.target, clock=lambda: clock_now[0]) as store:
        view = store.tenant("acme")
        with view.commit(message="old") as tx:
            tx.add("Deploys run on Tuesdays after the deploy standup.", kind="fact", key="day")
            tx.add("The deploy failed on a missing migration.", kind="event", session="s1")
            tx.add("Old deploy checklist, archived.", kind="procedure", tier="archive")
        clock_now[0] = next(times)
        with view.commit(message="new") as tx:
            tx.add("Deploys moved to Wednesdays.", kind="fact", key="day")
            tx.add("Deploy checklist: migrate, then restart.", kind="procedure", session="s2")
            tx.add("The migration of the ops deploy passed.", kind="event", scope="ops",
                   session="s2")  # fmt: skip
            tx.add("Never deploy on a Friday.", kind="correction", always=True)
            ended = tx.add("Deploys need two approvals.", kind="fact")
        with view.commit(message="end") as tx:
            tx.invalidate(ended.id)
    return cli


def _flags(args: list[str]) -> tuple[str, dict]:
    """The query and the recall flags click parses from ``args`` (the command's own parsing)."""
    with recall_cmd.make_context("recall", list(args)) as ctx:
        params = dict(ctx.params)
    for name in ("store_target", "wide", "as_json"):
        params.pop(name)
    return params.pop("query"), params


EVERY_FLAG = [
    QUERY,
    "--kind", "fact", "--kind", "episodic", "--kind", "procedure",
    "--scope", "shared", "--scope", "ops",
    "--session", "s2",
    "--max-age", "8d",
    "--every-key-version",
    "--with-ended",
    "--tier", "short", "--tier", "archive",
    "--recency-weight", "0.25",
    "--half-life", "12h",
    "--words", "40",
    "--max-records", "4",
    "--pool", "facts:20:2:fact",
    "--pool", "rest:20:2:event,procedure",
    "--scorer", "tfidf",
    "--now", NOW.isoformat(),
    "--as-of", "3",
    "--explain",
    "--tenant", "acme",
]  # fmt: skip

EVERY_FIELD = RecallOptions(
    tenant="acme",
    kinds=("fact", "event", "procedure"),
    scopes=("shared", "ops"),
    session="s2",
    include_previous_sessions=True,
    max_age=timedelta(days=8),
    latest_per_key=False,
    live=False,
    tiers=("short", "archive"),
    recency_weight=0.25,
    half_life=timedelta(hours=12),
    budget=Words(40),
    max_records=4,
    pools=(Pool("facts", 20, 2, ("fact",)), Pool("rest", 20, 2, ("event", "procedure"))),
    scorer="tfidf",
    as_of=3,
    now=NOW,
    explain=True,
)


def test_every_flag_is_the_field_of_the_python_api(seeded):
    query, flags = _flags(EVERY_FLAG)
    with memcommit.open(seeded.target) as store:
        view = store.tenant("acme")
        options = recall_options(view, flags.pop("tenant"), flags)
        assert options == EVERY_FIELD
        expected = recall(view, query, EVERY_FIELD).to_dict(rows=True)
    assert expected["selected"] and len(expected["rows"]) > len(expected["selected"])
    assert seeded.json("recall", *EVERY_FLAG) == expected


def test_only_session_and_default_tiers_spell_their_fields(seeded):
    args = [QUERY, "--session", "s2", "--only-session", "--tenant", "acme", "--now", "2h"]
    _, flags = _flags(args)
    with memcommit.open(seeded.target) as store:
        options = recall_options(store.tenant("acme"), flags.pop("tenant"), flags)
    assert options.include_previous_sessions is False and options.session == "s2"
    assert options.tiers == RecallOptions().tiers and options.pools is None
    assert options.replace(now=None) == RecallOptions(
        tenant="acme", session="s2", include_previous_sessions=False
    )


def test_a_bad_pool_flag_names_the_pool(seeded):
    for text, reason in [
        ("facts:20", "NAME:SIZE:ENTRIES"),
        ("facts:x:2", "whole numbers"),
        ("facts:20:2:facts", "unknown kind 'facts'"),
        ("facts:-1:2", "Pool.max_tokens"),
    ]:
        _, flags = _flags([QUERY, "--words", "40", "--pool", text, "--tenant", "acme"])
        with memcommit.open(seeded.target) as store, pytest.raises(InvalidInput) as err:
            recall_options(store.tenant("acme"), flags.pop("tenant"), flags)
        assert err.value.field in ("pool", "pools") and reason in str(err.value)
        out = seeded("recall", QUERY, "--words", "40", "--pool", text, tenant="acme", code=1)
        assert reason in out.output


def test_the_mcp_arguments_are_the_fields_of_the_python_api(seeded):
    arguments = {
        "max_records": 4,
        "kinds": ["fact", "event", "procedure"],
        "scopes": ["shared", "ops"],
        "session": "s2",
        "include_previous_sessions": True,
        "latest_per_key": False,
        "recency_weight": 0.25,
    }
    pools = [
        agent.PoolSpec(name="facts", max_tokens=20, max_entries=2, kinds=["fact"]),
        agent.PoolSpec(name="rest", max_tokens=20, max_entries=2, kinds=["event", "procedure"]),
    ]
    options = agent.recall_options("acme", 40, "words", pools, **arguments)
    # The fields the tool does not offer keep recall's defaults.
    defaults = RecallOptions()
    assert options == EVERY_FIELD.replace(
        max_age=None, live=True, tiers=defaults.tiers, half_life=defaults.half_life,
        scorer=defaults.scorer, as_of=None, now=None, explain=False,
    )  # fmt: skip
    with memcommit.open(seeded.target) as store:
        answer = agent.AgentMemory(store, "acme").recall(
            QUERY, budget=40, budget_unit="words", pools=pools, **arguments
        )
        expected = recall(store.tenant("acme"), QUERY, options)
    assert answer["context"] == expected.render() and expected.selected
    assert [m["id"] for m in answer["selected"]] == [m.id for m in expected.selected]
    assert answer["used"] == dict(expected.used)
