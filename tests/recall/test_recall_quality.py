"""The default scorer's conversation components: speakers, dates, spelling, and each score's parts.

Unit behaviour of each component (recall/scoring/speakers.py, recall/scoring/when.py,
recall/scoring/spelling.py), then the components at work through recall() on real
stores of both backends, the parts every row shows, determinism and
insertion-order independence.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcommit.model import Memory
from memcommit.recall import recall
from memcommit.recall.index.columns import Codes, to_micros
from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.index.text import speaker_of
from memcommit.recall.scoring.memory import MemoryScorer
from memcommit.recall.scoring.speakers import named_speakers
from memcommit.recall.scoring.spelling import correction, normalized
from memcommit.recall.scoring.when import asked_times, date_levels

NOW = datetime(2024, 5, 10, 12, tzinfo=timezone.utc)  # a Friday


# ── speakers ────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("content", "metadata", "speaker"),
    [
        ("Nate: I got a puppy", {}, "nate"),
        ("Dr. Smith: take two", {}, "dr. smith"),
        ("  Mary Ann Lee :  hello", {}, "mary ann lee"),
        ("I got a puppy", {}, None),
        ("see http://example.org: it works", {}, None),
        ("12: numbers are not names", {}, None),
        ("Nate: text", {"speaker": " Joanna  B "}, "joanna b"),
        ("plain text", {"speaker": ""}, None),
    ],
)
def test_speaker_of_reads_metadata_then_the_name_before_a_colon(content, metadata, speaker):
    memory = Memory(id="m", content=content, metadata=metadata)
    assert speaker_of(memory) == speaker


def test_named_speakers_ignores_case_short_words_and_stop_words():
    codes = Codes()
    for name in ("nate", "dr smith", "al", "the band"):
        codes.code(name)
    assert named_speakers(["what", "did", "nate", "say"], codes) == [0]
    assert named_speakers(["smith"], codes) == [1]
    assert named_speakers(["al"], codes) == []  # two letters: too short to name anyone
    assert named_speakers(["the"], codes) == []  # a stop word names nobody
    assert named_speakers(["band"], codes) == [3]


def test_a_query_that_names_no_one_names_the_askers_role():
    codes = Codes()
    for name in ("assistant", "user"):
        codes.code(name)
    assert named_speakers(["which", "flask", "routes"], codes) == [1]  # the user asks
    assert named_speakers(["assistant", "suggest"], codes) == [0]  # a named role wins
    people = Codes()
    for name in ("nate", "joanna"):
        people.code(name)
    assert named_speakers(["which", "flask", "routes"], people) == []  # names, not roles


def test_in_a_user_assistant_chat_the_users_own_words_outrank_a_long_reply(make_store):
    """The user said it once, briefly; the assistant's long reply repeats the words."""
    store = make_store("chat.db")
    reply = (
        "assistant: Great question about Flask routes! Flask routes map URLs to view "
        "functions, and there are many ways to organise them: blueprints, "
        + " ".join(f"pattern{i} for routes in larger applications" for i in range(12))
    )
    turns = ["user: I wrote two Flask routes for the login page today", reply]
    when = NOW - timedelta(days=2)
    for i, text in enumerate(turns):
        with store.commit(now=when + timedelta(seconds=i)) as tx:
            tx.add(text, kind="event", tenant="chat", session="s1")
    ctx = recall(store, "Have I written Flask routes?", tenant="chat", now=NOW, max_records=1)
    assert [m.content for m in ctx.selected] == [turns[0]]
    row = next(r for r in ctx.rows if r.memory.content == turns[0])
    assert row.components["speaker"] == 2.0  # the asker's factor, shown in the explanation


# ── dates ───────────────────────────────────────────────────────────────────


def test_asked_times_reads_absolute_dates():
    asked = asked_times("What did Maria do on 31 July, 2023 and October 13th 2023?", NOW)
    assert asked.days == {(2023, 7, 31), (2023, 10, 13)}
    assert asked.months == {7, 10} and asked.years == {2023}
    assert asked_times("what happened in june", NOW).months == {6}
    assert asked_times("see 2023-02-28", NOW).days == {(2023, 2, 28)}
    assert asked_times("on 7 May", NOW).days == {(0, 5, 7)}  # no year: any year


def test_asked_times_needs_a_number_beside_ambiguous_month_words():
    assert not asked_times("May I ask what you did in March?", NOW)
    assert asked_times("in May 2023", NOW).months == {5}
    assert not asked_times("on 31 February", NOW).days  # not a day


def test_asked_times_resolves_relative_words_at_now():
    day = timedelta(days=1)
    today = NOW.date()
    assert asked_times("what did I do yesterday", NOW).periods == ((today - day, today),)
    assert asked_times("three days ago", NOW).periods == ((today - 3 * day, today - 2 * day),)
    monday = today - timedelta(days=today.weekday())
    assert asked_times("last week", NOW).periods == ((monday - 7 * day, monday),)
    last_friday = today - 7 * day  # today is a Friday: "last friday" is a week ago
    assert asked_times("last friday", NOW).periods == ((last_friday, last_friday + day),)
    assert asked_times("2 months ago", NOW).periods[0][0].month == 3
    assert asked_times("last year", NOW).periods[0][0].year == 2023


def test_date_levels_counts_day_over_month_and_year():
    created = np.array(
        [
            to_micros(datetime(2023, 7, 31, 9, tzinfo=timezone.utc), 0),
            to_micros(datetime(2023, 7, 2, tzinfo=timezone.utc), 0),
            to_micros(datetime(2022, 7, 31, tzinfo=timezone.utc), 0),
            np.iinfo(np.int64).min,  # no creation time
        ],
        dtype=np.int64,
    )
    levels = date_levels(created, asked_times("on 31 July, 2023", NOW))
    assert levels.tolist() == [2, 1, 0, 0]
    assert date_levels(created, asked_times("nothing dated", NOW)).tolist() == [0, 0, 0, 0]


# ── spelling ────────────────────────────────────────────────────────────────


def _index(texts: list[str], tenant: str = "t") -> TenantIndex:
    index = TenantIndex(tenant)
    index.put_many(Memory(id=f"m{i}", content=text, tenant=tenant) for i, text in enumerate(texts))
    return index


def test_correction_maps_typos_and_elongations_to_the_tenants_words():
    index = _index(["the tournament was long", "a tournament in town", "cool, yes", "cool"])
    assert correction(index, "torunament") == "tournament"  # two letters swapped
    assert correction(index, "tournamnt") == "tournament"  # one letter missing
    assert correction(index, "tournament") is None  # known
    assert correction(index, "cooool") == "cool"  # elongations cut to two letters
    assert correction(index, "yesss") == "yes"  # then to one
    assert correction(index, "tounr") is None  # nothing one edit away
    assert correction(index, "cooo") is None  # four letters: too short to correct


def test_correction_needs_a_frequent_word_and_leaves_calendar_words_alone():
    rare = _index(["one tournament only"])
    assert correction(rare, "torunament") is None  # df 1: as rare as a misspelling
    assert correction(_index(["tune in", "tune out"]), "june") is None


def test_normalized_keeps_counts_and_known_terms():
    index = _index(["the tournament was long", "a tournament in town"])
    terms = normalized(index, {"torunament": 1, "tournament": 2, "zzz": 1})
    assert terms == {"tournament": 3, "zzz": 1}


def test_spelling_uses_only_the_tenants_own_vocabulary(make_store):
    store = make_store("spell.db")
    with store.commit(message="two tenants", now=NOW) as tx:
        for tenant, word in (("a", "tournament"), ("b", "ornament")):
            for i in range(2):
                tx.add(f"the {word} number {i}", id=f"{tenant}{i}", tenant=tenant)
    found = recall(store, "torunament", tenant="b", now=NOW)
    assert found.selected == []  # tenant a's "tournament" corrects nothing for tenant b
    assert [m.id for m in recall(store, "torunament", tenant="a", now=NOW)] == ["a0", "a1"]


# ── the components through recall(), on both backends ─────────────────────


def _conversation(store, turns):
    """(session, minutes after the start, text) per turn, one commit each."""
    start = datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
    for i, (session, minutes, text) in enumerate(turns):
        with store.commit(message="turn", now=start + timedelta(minutes=minutes)) as tx:
            tx.add(text, id=f"T{i}", tenant="c", kind="event", session=session)
    return store


def test_a_question_naming_a_speaker_prefers_what_that_speaker_said(make_store):
    store = _conversation(
        make_store("speaker.db"),
        [
            ("s1", 0, "Joanna: my puppy loves the park"),
            ("s2", 1, "Nate: my puppy loves the beach"),
        ],
    )
    ranked = recall(store, "where does nate's puppy like to go", tenant="c", now=NOW)
    assert [m.id for m in ranked] == ["T1", "T0"]
    off = recall(
        store,
        "where does nate's puppy like to go",
        tenant="c",
        now=NOW,
        scorer=MemoryScorer(speaker=0.0),
    )
    rows = {row.memory.id: row.components for row in off.rows}
    assert rows["T0"]["speaker"] == rows["T1"]["speaker"] == 1.0


def test_a_named_day_lifts_the_memories_of_that_day(make_store):
    store = make_store("dates.db")
    for day in (3, 4, 5):
        when = datetime(2024, 5, day, 9, tzinfo=timezone.utc)
        with store.commit(message="day", now=when) as tx:
            tx.add(f"we talked about the garden on day {day}", id=f"D{day}", tenant="c")
    ranked = recall(store, "what about the garden on 4 May 2024?", tenant="c", now=NOW)
    assert ranked.selected[0].id == "D4"
    parts = {row.memory.id: row.components["dates"] for row in ranked.rows}
    assert parts == {"D3": 1.5, "D4": 2.25, "D5": 1.5}  # month and year; and the day
    yesterday = recall(
        store, "the garden yesterday", tenant="c", now=datetime(2024, 5, 4, 20, tzinfo=timezone.utc)
    )
    assert yesterday.selected[0].id == "D3"


def test_rows_show_the_parts_of_each_score(make_store):
    store = _conversation(
        make_store("parts.db"),
        [
            ("s1", 0, "Mel: did you go hiking?"),
            ("s1", 1, "Caro: yes, up the ridge with friends"),
            ("s2", 60, "Mel: the weather was nice"),
        ],
    )
    ctx = recall(store, "Who went hiking with Caro?", tenant="c", now=NOW, recency_weight=0.2)
    rows = {row.memory.id: row for row in ctx.rows}
    for row in rows.values():
        if row.score is None:
            assert row.components is None
            continue
        parts = row.components
        assert set(parts) == {
            "bm25",
            "neighbours",
            "session",
            "speaker",
            "dates",
            "relevance",
            "recency",
        }
        assert math.isclose(row.score, 0.8 * parts["relevance"] + 0.2 * parts["recency"])
        assert row.to_dict()["components"] == parts
    assert rows["T1"].components["neighbours"] > 0.0  # the question before it matched
    assert rows["T0"].components["speaker"] == 1.0  # Mel said it: the query names Caro
    assert rows["T1"].components["speaker"] == 2.0  # Caro said it, and the query names her
    best = max(rows.values(), key=lambda row: row.score or -1.0)
    assert best.components["relevance"] == 1.0
    plain = recall(store, "hiking", tenant="c", now=NOW, scorer="tfidf")
    assert all(row.components is None for row in plain.rows)


def test_the_parts_multiply_to_the_relevance(make_store):
    store = _conversation(
        make_store("product.db"),
        [("s1", i, f"{('Ann', 'Bob')[i % 2]}: garden talk number {i} garden") for i in range(6)],
    )
    ctx = recall(store, "what did Ann say about the garden in May", tenant="c", now=NOW)
    scored = [row.components for row in ctx.rows if row.components]
    raw = [(p["bm25"] + p["neighbours"]) * p["session"] * p["speaker"] * p["dates"] for p in scored]
    for parts, value in zip(scored, raw, strict=True):
        assert math.isclose(parts["relevance"], value / max(raw))


@pytest.mark.parametrize(
    "off", [{"stems": False}, {"spelling": False}, {"neighbours": 0.0}, {"session": 0.0}]
)
def test_each_component_can_be_turned_off(make_store, off):
    store = _conversation(
        make_store("off.db"),
        [
            ("s1", 0, "Mel: did you go hikking?"),
            ("s1", 1, "Caro: yes, we hiked up the ridge"),
            ("s2", 60, "Caro: hiking again soon"),
        ],
    )
    ctx = recall(store, "hiking hikking", tenant="c", now=NOW, scorer=MemoryScorer(**off))
    parts = {row.memory.id: row.components for row in ctx.rows if row.components}
    if "neighbours" in off:
        assert all(p["neighbours"] == 0.0 for p in parts.values())
    if "session" in off:
        assert all(p["session"] == 1.0 for p in parts.values())
    if "stems" in off:  # "hiking" finds only itself, not "hiked"
        assert parts["T1"]["bm25"] == 0.0
    else:
        assert parts["T1"]["bm25"] > 0.0


# ── determinism ─────────────────────────────────────────────────────────────

_NAMES = ["Ann", "Bob", "ann", None]
_WORDS = ["garden", "gardens", "hiking", "hiked", "puppy", "may", "2024", "yesterday", "gardn"]


def _memories(specs) -> list[Memory]:
    start = datetime(2024, 4, 28, tzinfo=timezone.utc)
    out = []
    for i, (speaker, words, session, hours) in enumerate(specs):
        text = " ".join(words)
        out.append(
            Memory(
                id=f"m{i:02d}",
                content=f"{speaker}: {text}" if speaker else text,
                tenant="t",
                session=f"s{session}",
                created_at=start + timedelta(hours=hours),
                created_commit=i + 1,
            )
        )
    return out


specs = st.lists(
    st.tuples(
        st.sampled_from(_NAMES),
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6),
        st.integers(0, 2),
        st.integers(0, 200),
    ),
    min_size=1,
    max_size=16,
)
questions = st.lists(st.sampled_from([*_WORDS, "ann", "Bob", "on", "30", "april"]), max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=specs, words=questions, seed=st.integers(0, 2**16))
def test_shuffling_the_memories_never_changes_the_ranking_or_its_parts(specs, words, seed):
    memories = _memories(specs)
    shuffled = list(memories)
    random.Random(seed).shuffle(shuffled)
    query = " ".join(words)

    def ranked(items):
        ctx = recall(items, query, tenant="t", now=NOW, max_records=5)
        return [(row.memory.id, row.score, row.components) for row in ctx.rows]

    first = ranked(memories)
    assert ranked(shuffled) == first
    assert ranked(memories) == first  # and the same input twice gives the same output
