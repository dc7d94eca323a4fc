"""LoCoMo retrieval quality: memcommit's recall beside bm25s, no LLM, no network.

Every turn of a conversation is one memory ("speaker: text", created at its
session's date plus its position in seconds, session = "session_N"), each
conversation is one tenant of one store, the query is the question and the
relevant memories are its evidence turns. Reported over categories 1-4:
recall@5 and recall@10 (share of evidence turns retrieved, averaged over
questions) and hit@10 (at least one evidence turn in the top 10). Evidence ids
that name no turn of the conversation are dropped; questions left with none are
skipped (counted in the output).

    .venv/bin/python benchmarks/locomo_eval.py [DATASET] [--json] [--scorer NAME]

The dataset is read where it lies (default ../shared/data/locomo/locomo-dev.json);
it is evaluation data and is never copied into this repository.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import memcommit
from memcommit.recall import recall

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
CATEGORIES = (1, 2, 3, 4)
_SESSION = re.compile(r"session_(\d+)$")


def session_time(text: str) -> datetime:
    """Parse LoCoMo's "1:56 pm on 8 May, 2023" as an aware UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turns(sample: dict) -> list[tuple[str, str, str, datetime]]:
    """(dia_id, session, text, created) of every turn, in conversation order."""
    conv = sample["conversation"]
    out = []
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)) and conv[key]
    )
    for _number, key in sessions:
        start = session_time(conv[f"{key}_date_time"])
        for position, turn in enumerate(conv[key]):
            text = f"{turn['speaker']}: {turn['text']}"
            out.append((turn["dia_id"], key, text, start + timedelta(seconds=position)))
    return out


def questions(sample: dict, known: set[str]) -> tuple[list[tuple[str, set[str], int]], int]:
    """(question, evidence ids, category) for categories 1-4, and how many were skipped."""
    out, skipped = [], 0
    for qa in sample["qa"]:
        if qa.get("category") not in CATEGORIES:
            continue
        evidence = {
            part for item in qa.get("evidence", []) for part in re.split(r"[;,\s]+", item) if part
        }
        evidence &= known
        if not evidence:
            skipped += 1
            continue
        out.append((qa["question"], evidence, qa["category"]))
    return out, skipped


class Scores:
    """Accumulates recall@5, recall@10 and hit@10, overall and per category."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, float, float, float]] = []

    def add(self, category: int, ranked: list[str], evidence: set[str]) -> None:
        top5, top10 = set(ranked[:5]), set(ranked[:10])
        self.rows.append(
            (
                category,
                len(top5 & evidence) / len(evidence),
                len(top10 & evidence) / len(evidence),
                1.0 if top10 & evidence else 0.0,
            )
        )

    @staticmethod
    def _summary(rows: list[tuple[int, float, float, float]]) -> dict[str, float]:
        n = len(rows) or 1
        return {
            "recall@5": round(sum(r[1] for r in rows) / n, 4),
            "recall@10": round(sum(r[2] for r in rows) / n, 4),
            "hit@10": round(sum(r[3] for r in rows) / n, 4),
            "questions": len(rows),
        }

    def summary(self) -> dict:
        out = self._summary(self.rows)
        out["by_category"] = {
            str(c): self._summary([r for r in self.rows if r[0] == c]) for c in CATEGORIES
        }
        return out


def run_memcommit(samples: list[dict], scorer: str | None) -> Scores:
    """Every conversation a tenant of its own in-memory store; recall top 10 per question.

    One store per conversation: a store's commit times only move forward, and the
    conversations' dates overlap.
    """
    scores = Scores()
    for sample in samples:
        store = memcommit.open(":memory:")
        tenant = sample["sample_id"]
        conv = turns(sample)
        ids: dict[str, str] = {}
        for dia_id, session, text, created in conv:  # one commit per turn, at the turn's time
            with store.commit(message=f"{tenant} {dia_id}", now=created) as tx:
                ids[tx.add(text, kind="event", tenant=tenant, session=session).id] = dia_id
        qs, _ = questions(sample, {t[0] for t in conv})
        now = conv[-1][3] + timedelta(days=1)
        for question, evidence, category in qs:
            ctx = recall(
                store,
                question,
                tenant=tenant,
                max_records=10,
                scorer=scorer,
                now=now,
                explain=False,
            )
            scores.add(category, [ids[m.id] for m in ctx.selected], evidence)
        store.close()
    return scores


def run_bm25s(samples: list[dict], stem: bool) -> Scores:
    """bm25s with its English stop words, optionally with PyStemmer's English stemmer."""
    import bm25s

    stemmer = None
    if stem:
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
    scores = Scores()
    for sample in samples:
        conv = turns(sample)
        corpus = [t[2] for t in conv]
        retriever = bm25s.BM25()
        retriever.index(
            bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False),
            show_progress=False,
        )
        qs, _ = questions(sample, {t[0] for t in conv})
        for question, evidence, category in qs:
            tokens = bm25s.tokenize(
                [question], stopwords="en", stemmer=stemmer, show_progress=False
            )
            if not tokens.vocab:
                scores.add(category, [], evidence)
                continue
            docs, _ = retriever.retrieve(tokens, k=min(10, len(corpus)), show_progress=False)
            scores.add(category, [conv[i][0] for i in docs[0].tolist()], evidence)
    return scores


def table(results: dict[str, dict]) -> str:
    """Systems side by side: overall and per category."""
    lines = []
    header = f"{'system':<17}{'scope':<8}{'recall@5':>10}{'recall@10':>11}{'hit@10':>9}{'n':>6}"
    lines.append(header)
    for name, summary in results.items():
        rows = [("all", summary)] + [(f"cat {c}", s) for c, s in summary["by_category"].items()]
        for label, s in rows:
            lines.append(
                f"{name:<17}{label:<8}{s['recall@5']:>10.3f}{s['recall@10']:>11.3f}"
                f"{s['hit@10']:>9.3f}{s['questions']:>6}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--scorer", default=None, help="memcommit scorer (default: recall's)")
    args = parser.parse_args(argv)
    samples = json.loads(Path(args.dataset).read_text())
    systems: dict[str, Callable[[], Scores]] = {
        "memcommit": lambda: run_memcommit(samples, args.scorer),
        "memcommit-tfidf": lambda: run_memcommit(samples, "tfidf"),  # the seed's exact ranking
        "bm25s": lambda: run_bm25s(samples, stem=False),
        "bm25s+stem": lambda: run_bm25s(samples, stem=True),
    }
    results = {name: run().summary() for name, run in systems.items()}
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        skipped = sum(questions(s, {t[0] for t in turns(s)})[1] for s in samples)
        print(
            f"LoCoMo {Path(args.dataset).name}: {len(samples)} conversations, "
            f"categories 1-4, {skipped} questions without a known evidence turn skipped"
        )
        print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
