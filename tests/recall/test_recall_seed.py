"""Every sentence of the seed's "Scope before similarity", "Read the actual score" and
"Pack and inspect" sections (and its two worked examples), on the teaching bank."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from recall_bank import Q_INCIDENT, Q_PROCEDURE, row, selected

from memcommit.recall import Words
from memcommit.recall.index.text import STOP_WORDS, tokenize

# ── A nonempty context can omit the answer ─────────────────────────────────────


def procedure(seed, n, max_records=3):
    return seed(
        Q_PROCEDURE,
        kinds=["procedural"],
        max_age=timedelta(hours=168),
        recency_weight=0.0,
        max_records=max_records,
        budget=Words(n),
    )


def test_budget_eleven_fits_the_declared_procedure(seed):
    assert selected(procedure(seed, 11)) == ["M4"]


def test_budget_ten_skips_m4_and_the_shorter_checklist_fits(seed):
    ctx = procedure(seed, 10)
    assert selected(ctx) == ["M7"]  # nonempty, yet the supporting fact M4 is missing
    assert row(ctx, "M4").reason == "over_budget"
    assert row(ctx, "M7").cosine < row(ctx, "M4").cosine


def test_budget_nine_fits_neither(seed):
    ctx = procedure(seed, 9)
    assert selected(ctx) == []
    assert {row(ctx, m).reason for m in ("M4", "M7")} == {"over_budget"}


def test_budget_twenty_fits_only_m4_and_twenty_one_both(seed):
    assert selected(procedure(seed, 20)) == ["M4"]
    assert selected(procedure(seed, 21)) == ["M4", "M7"]


def test_one_record_removes_m7_although_budget_remains(seed):
    ctx = procedure(seed, 21, max_records=1)
    assert selected(ctx) == ["M4"]
    assert row(ctx, "M7").reason == "over_record_limit"


# ── Separate retention from ranking ─────────────────────────────────────────────


def incident(seed, **kw):
    kw.setdefault("budget", Words(80))
    kw.setdefault("max_records", 1)
    return seed(Q_INCIDENT, **kw)


def test_recency_one_picks_the_current_working_ticket(seed):
    assert selected(incident(seed, recency_weight=0.0)) == ["M3"]
    assert selected(incident(seed, recency_weight=1.0)) == ["M5"]


def test_max_age_is_inclusive(seed):
    at_47 = incident(seed, kinds=["episodic"], max_age=timedelta(hours=47))
    assert selected(at_47) == [] and row(at_47, "M3").reason == "too_old"
    assert selected(incident(seed, kinds=["episodic"], max_age=timedelta(hours=48))) == ["M3"]


def test_previous_sessions_off_excludes_m3_independently_of_age(seed):
    ctx = incident(seed, kinds=["episodic"], session="s2", include_previous_sessions=False)
    assert row(ctx, "M3").reason == "previous_session"


# ── Scope before similarity ─────────────────────────────────────────────────────


def test_tenant_is_a_hard_filter(seed):
    a = seed(Q_INCIDENT)
    b = seed(Q_INCIDENT, tenant="team-b")
    assert {r.memory.tenant for r in a.rows} == {"team-a"}
    assert {r.memory.tenant for r in b.rows} == {"team-b"}
    assert {r.memory.id for r in b.rows} == {"M6", "M8", "M10"}


@pytest.mark.parametrize(
    ("store_name", "kind"),
    [
        ("semantic", "fact"),
        ("episodic", "event"),
        ("procedural", "procedure"),
        ("working", "working"),
    ],
)
def test_memory_store_chooses_one_kind(seed, store_name, kind):
    ctx = seed(Q_INCIDENT, kinds=[store_name])
    for r in ctx.rows:
        if r.memory.kind != kind:
            assert r.reason == "other_kind" and r.stage == "filters"
        else:
            assert r.reason != "other_kind"


def test_all_stores(seed):
    ctx = seed(Q_INCIDENT, kinds=["all"])
    assert not [r for r in ctx.rows if r.reason == "other_kind"]


def test_include_previous_sessions_admits_older_conversations(seed):
    on = seed(Q_INCIDENT, session="s2")
    off = seed(Q_INCIDENT, session="s2", include_previous_sessions=False)
    assert "M3" in {r.memory.id for r in on.rows if r.outcome == "selected"}
    only_current = {r.memory.id for r in off.rows if r.reason != "previous_session"}
    assert all(row(off, m).memory.session == "s2" for m in only_current)


def test_latest_per_key_excludes_the_older_record(seed):
    ctx = seed("database timeout seconds", kinds=["semantic"], latest_per_key=True)
    assert row(ctx, "M1").reason == "superseded"
    assert "M2" in selected(ctx)


def test_latest_per_key_holds_even_when_the_newer_record_is_filtered(seed):
    ctx = seed(
        "database timeout seconds",
        kinds=["semantic"],
        latest_per_key=True,
        session="s2",
        include_previous_sessions=False,
    )
    assert row(ctx, "M2").reason == "previous_session"
    assert row(ctx, "M1").reason == "superseded"  # never resurrected
    assert selected(ctx) == []
    without = seed(
        "database timeout seconds",
        kinds=["semantic"],
        session="s2",
        include_previous_sessions=False,
    )
    assert selected(without) == ["M1"]


def test_latest_per_key_only_compares_records_of_the_same_tenant(seed, bank, now):
    with bank.commit(message="b key", now=now) as tx:
        tx.add("Team B database timeout is 5 seconds.", id="B9", tenant="team-b", key="db.timeout")
    ctx = seed("database timeout seconds", kinds=["semantic"], latest_per_key=True)
    assert "M2" in selected(ctx)


# ── Read the actual score ───────────────────────────────────────────────────────


def test_lowercase_and_fixed_stop_words():
    assert tokenize("The Database TIMEOUT is set") == ["database", "timeout", "set"]
    assert {"the", "is", "a"} <= STOP_WORDS


def test_cosine_is_log_tf_smoothed_idf_dot_over_lengths(seed):
    ctx = seed("database database pool")
    docs = {r.memory.id: tokenize(r.memory.content) for r in ctx.rows}
    n = len(docs)

    def df(term):
        return sum(term in terms for terms in docs.values())

    def vector(terms):
        return {
            t: (1 + math.log(terms.count(t))) * (math.log((1 + n) / (1 + df(t))) + 1)
            for t in set(terms)
        }

    q = vector(tokenize("database database pool"))
    for r in ctx.rows:
        d = vector(docs[r.memory.id])
        dot = sum(q[t] * d[t] for t in q if t in d)
        expected = dot / (
            math.sqrt(sum(v * v for v in q.values())) * math.sqrt(sum(v * v for v in d.values()))
        )
        assert r.cosine == pytest.approx(expected, rel=1e-12)


def test_no_paraphrase_and_no_negation(seed):
    assert selected(seed("postgres latency", kinds=["semantic"])) == []  # no shared word
    negated = seed("database timeout is not set", kinds=["semantic"])
    plain = seed("database timeout is set", kinds=["semantic"])
    assert [(r.memory.id, r.cosine) for r in negated.rows] == [
        (r.memory.id, r.cosine) for r in plain.rows
    ]


def test_recency_blend_with_a_24_hour_half_life(seed):
    ctx = seed(Q_INCIDENT, recency_weight=0.3)
    for r in ctx.rows:
        if r.score is not None:
            age_hours = {"M1": 72, "M2": 20, "M3": 48, "M4": 30, "M5": 1}[r.memory.id]
            expected = 0.7 * r.cosine + 0.3 * 2 ** (-age_hours / 24)
            assert r.score == pytest.approx(expected, rel=1e-12)


def test_weight_zero_ranks_by_cosine_only(seed):
    ctx = seed(Q_INCIDENT, recency_weight=0.0)
    ranked = [r for r in ctx.rows if r.score is not None]
    assert all(r.score == r.cosine for r in ranked)
    assert [r.cosine for r in ranked] == sorted((r.cosine for r in ranked), reverse=True)


def test_weight_one_ranks_by_recency_but_no_match_stays_out(seed):
    ctx = seed(Q_INCIDENT, recency_weight=1.0)
    assert row(ctx, "M9").reason == "no_lexical_match"  # newest record, no shared term
    assert row(ctx, "M9").score is None
    ranked = [r.memory.id for r in ctx.rows if r.score is not None]
    assert ranked == ["M5", "M2", "M4", "M3", "M1"]  # youngest first


def test_table_shows_text_cosine_score_and_reason(seed):
    ctx = seed(Q_PROCEDURE, budget=Words(10))
    for r in ctx.rows:
        assert r.memory.content
        assert r.outcome in ("selected", "excluded")
        assert (r.reason is None) == (r.outcome == "selected")
        if r.stage in ("ranking", "packing"):
            assert r.cosine is not None


# ── Pack and inspect ────────────────────────────────────────────────────────────


def test_budget_limits_the_sum_of_whitespace_words(seed):
    for n in range(0, 40):
        ctx = seed(Q_INCIDENT, budget=Words(n))
        assert sum(len(m.content.split()) for m in ctx.selected) <= n
        assert ctx.used["context"] == sum(len(m.content.split()) for m in ctx.selected)


def test_max_records_is_a_separate_count_limit(seed):
    for k in range(0, 6):
        assert len(seed(Q_INCIDENT, max_records=k).selected) == min(k, 5)


def test_greedy_skips_what_does_not_fit_and_continues(seed):
    ctx = seed(Q_INCIDENT, budget=Words(8))  # the best match, M3, has 11 words
    picked = selected(ctx)
    ranked = [r for r in ctx.rows if r.stage == "packing"]
    assert any(r.reason == "over_budget" for r in ranked)
    skipped_first = next(r for r in ranked if r.reason == "over_budget")
    later = [r for r in ranked if r.score < skipped_first.score and r.outcome == "selected"]
    assert later, picked  # a lower-ranked record was taken after a skip


def test_records_are_never_truncated(seed, bank):
    ctx = seed(Q_INCIDENT, budget=Words(12))
    for m in ctx.selected:
        assert m.content == bank.get(m.id).content


def test_not_an_optimal_packing(tmp_path, now):
    from recall_bank import build_bank

    store = build_bank(
        str(tmp_path / "greedy.db"),
        now,
        [
            ("A", "t", "fact", "s", 1, None, "alpha beta gamma delta epsilon zeta"),  # 6 words
            ("B", "t", "fact", "s", 1, None, "alpha one two three four"),  # 5 words
            ("C", "t", "fact", "s", 1, None, "alpha five six seven eight"),  # 5 words
        ],
    )
    from memcommit.recall import recall

    ctx = recall(store, "alpha beta gamma", tenant="t", budget=Words(10), now=now, scorer="tfidf")
    assert selected(ctx) == ["A"]  # B + C would fill all 10 words; greedy takes the best first
    store.close()


def test_result_is_computed_immediately(seed):
    ctx = seed(Q_PROCEDURE, explain=True)
    assert selected(ctx) and len(ctx.rows) == 7  # selection and every row, in one call
