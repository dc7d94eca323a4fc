"""LoCoMo retrieval quality: memcommit's recall beside bm25s, no LLM, no network.

Every turn of a conversation is one memory ("speaker: text", created at its
session's date plus its position in seconds, session = "session_N"), each
conversation is one tenant of one store, the query is the question and the
relevant memories are its evidence turns. Reported over categories 1-4
(1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop): recall@5 and recall@10
(share of evidence turns retrieved, averaged over questions) and hit@10 (at
least one evidence turn in the top 10), per category, by question length and
by evidence count, by the dataset's own ability or question type when its
questions carry one (``ability``, ``question_type``), and who said the turns
each system retrieved when the speakers are chat roles (``user``,
``assistant``); then the ablation of the default scorer (each component off in
turn) and recall@10 per conversation. A question that carries its own date
(``question_date`` or ``date``, LoCoMo's "1:56 pm on 8 May, 2023" or ISO 8601)
is asked at that date (recall's ``now``); otherwise a day after the last turn.
Evidence ids that name no turn of the conversation are dropped; questions left
with none are skipped (counted).

    .venv/bin/python benchmarks/locomo_eval.py [DATASET ...] [--json] [--scorer NAME] [--messy]
        [--embedder NAME] [--fusion-grid] [--conversations N]

``--embedder NAME`` (``local``, ``hash``, ...: `memcommit.embedding.resolve`) opens
every conversation's store with that embedder and adds two systems: the hybrid
recall (``memcommit+dense``: the lexical scorer fused with the dense cosine,
`memcommit.recall.scoring.fusion`) and the dense ranking alone (``dense``).
Vectors are cached on disk by embedder name and text hash (benchmarks/vector_cache.py,
under ~/.cache/memcommit), so only the first run pays for the model; ``--fusion-grid``
adds the fusion settings tried (RRF's k, the window depth, the dense weight).
``--conversations N`` keeps the first N conversations of each split.

``--messy`` asks every question the way people type in chat: lowercase, no
question mark, and the two middle letters of its longest word swapped.

Conversations are split by sample id: those of the development split (the
samples of ``locomo-dev.json``, which the default scorer was developed on) are
"dev", any other conversation a dataset holds is "held-out" and reported
apart. The datasets are read where they lie (default:
shared/data/locomo/locomo-dev.json in a folder above this one); they are
evaluation data and are never copied into this repository.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import memcommit
from memcommit.recall import recall
from memcommit.recall.scoring.fusion import fused_scorer
from memcommit.recall.scoring.memory import MemoryScorer

DEV_FILE = Path("shared") / "data" / "locomo" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
#: Question length buckets in words (lower bounds), and evidence count buckets.
LENGTHS = ((1, "1-6 words"), (7, "7-9 words"), (10, "10-12 words"), (13, "13+ words"))
EVIDENCE = ((1, "1 turn"), (2, "2 turns"), (3, "3 turns"), (4, "4+ turns"))
#: The default scorer with one component off at a time.
ABLATION = {
    "stems": {"stems": False},
    "spelling": {"spelling": False},
    "neighbours": {"neighbours": 0.0},
    "session": {"session": 0.0},
    "speaker": {"speaker": 0.0},
    "dates": {"dates": 0.0},
}
_SESSION = re.compile(r"session_(\d+)$")
#: Speakers that are chat roles: the share of each among retrieved turns is reported.
ROLES = ("user", "assistant", "system", "tool")


def default_dataset() -> Path:
    """The dev split in the nearest folder above this script that holds shared/data."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / DEV_FILE).is_file():
            return parent / DEV_FILE
    return here.parents[2] / DEV_FILE


def session_time(text: str) -> datetime:
    """Parse LoCoMo's "1:56 pm on 8 May, 2023" (or ISO 8601) as an aware UTC datetime."""
    try:
        moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    except ValueError:
        moment = datetime.fromisoformat(text.strip())
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def turns(sample: dict) -> list[tuple[str, str, str, datetime, str]]:
    """(dia_id, session, text, created, speaker) of every turn, in conversation order."""
    conv = sample["conversation"]
    out = []
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)) and conv[key]
    )
    for _number, key in sessions:
        start = session_time(conv[f"{key}_date_time"])
        for position, turn in enumerate(conv[key]):
            text = f"{turn['speaker']}: {turn['text']}"
            created = start + timedelta(seconds=position)
            out.append((turn["dia_id"], key, text, created, turn["speaker"]))
    return out


@dataclass(frozen=True)
class Question:
    """One question of categories 1-4 with its evidence turns, ability and date if given."""

    text: str
    evidence: frozenset[str]
    category: int
    ability: str | None = None
    date: datetime | None = None


def messy(text: str) -> str:
    """``text`` typed in a hurry: lowercase, no "?", the longest word's middle letters swapped."""
    words = text.lower().rstrip("?").split()
    longest = max(range(len(words)), key=lambda i: (len(words[i]), -i))
    word = words[longest]
    if len(word) >= 5 and word.isalpha():
        middle = len(word) // 2
        words[longest] = word[: middle - 1] + word[middle] + word[middle - 1] + word[middle + 1 :]
    return " ".join(words)


def questions(sample: dict, known: set[str]) -> tuple[list[Question], int]:
    """The questions of categories 1-4, and how many were skipped (no known evidence turn)."""
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
        ability = qa.get("ability") or qa.get("question_type")
        when = qa.get("question_date") or qa.get("date")
        out.append(
            Question(
                qa["question"],
                frozenset(evidence),
                qa["category"],
                str(ability) if ability else None,
                session_time(str(when)) if when else None,
            )
        )
    return out, skipped


def _bucket(value: int, buckets: tuple[tuple[int, str], ...]) -> str:
    return next(label for low, label in reversed(buckets) if value >= low)


@dataclass(frozen=True)
class Result:
    """One question's recall figures and what they are grouped by."""

    conversation: str
    question: Question
    recall5: float
    recall10: float
    hit10: float
    speakers: tuple[str, ...]  # who said each retrieved turn, in rank order


class Scores:
    """recall@5, recall@10 and hit@10 of one system, overall and grouped."""

    def __init__(self) -> None:
        self.results: list[Result] = []

    def add(
        self, conversation: str, question: Question, ranked: list[str], speakers: dict[str, str]
    ) -> None:
        """One question's top 10 (``ranked`` dia ids); ``speakers`` maps a dia id to its speaker."""
        evidence = question.evidence
        top5, top10 = set(ranked[:5]), set(ranked[:10])
        self.results.append(
            Result(
                conversation,
                question,
                len(top5 & evidence) / len(evidence),
                len(top10 & evidence) / len(evidence),
                1.0 if top10 & evidence else 0.0,
                tuple(speakers[dia_id] for dia_id in ranked[:10]),
            )
        )

    @staticmethod
    def _summary(results: list[Result]) -> dict[str, float]:
        n = len(results) or 1
        return {
            "recall@5": round(sum(r.recall5 for r in results) / n, 4),
            "recall@10": round(sum(r.recall10 for r in results) / n, 4),
            "hit@10": round(sum(r.hit10 for r in results) / n, 4),
            "questions": len(results),
        }

    @staticmethod
    def _roles(results: list[Result]) -> dict[str, float]:
        """The share of each chat role among the retrieved turns (empty unless roles speak)."""
        said = [speaker for r in results for speaker in r.speakers]
        if not said or not any(speaker in ROLES for speaker in said):
            return {}
        return {
            role: round(sum(s == role for s in said) / len(said), 4)
            for role in ROLES
            if role in said
        }

    def _grouped(self, key: Callable[[Result], str]) -> dict[str, dict[str, float]]:
        groups: dict[str, list[Result]] = {}
        for result in self.results:
            groups.setdefault(key(result), []).append(result)
        return {label: self._summary(rows) for label, rows in groups.items()}

    def summary(self) -> dict[str, Any]:
        """Overall, then per category, question length, evidence count and conversation.

        Groups without a question are left out.
        """
        out: dict[str, Any] = self._summary(self.results)
        out["roles"] = self._roles(self.results)
        by_category = self._grouped(
            lambda r: f"{r.question.category} {CATEGORIES[r.question.category]}"
        )
        out["by_category"] = dict(sorted(by_category.items()))
        lengths = self._grouped(lambda r: _bucket(len(r.question.text.split()), LENGTHS))
        out["by_length"] = {label: lengths[label] for _, label in LENGTHS if label in lengths}
        counts = self._grouped(lambda r: _bucket(len(r.question.evidence), EVIDENCE))
        out["by_evidence"] = {label: counts[label] for _, label in EVIDENCE if label in counts}
        out["by_conversation"] = dict(sorted(self._grouped(lambda r: r.conversation).items()))
        asked = [r for r in self.results if r.question.ability]
        abilities: dict[str, list[Result]] = {}
        for result in asked:
            abilities.setdefault(str(result.question.ability), []).append(result)
        out["by_ability"] = {name: self._summary(rows) for name, rows in sorted(abilities.items())}
        return out


@dataclass
class Conversation:
    """One conversation loaded as one tenant of its own in-memory store."""

    name: str
    store: Any
    dia_ids: dict[str, str]  # memory id -> dia_id
    speakers: dict[str, str]  # dia_id -> speaker
    questions: list[Question]
    now: datetime


def load(sample: dict, *, typed: Callable[[str], str] = str, embedder: Any = None) -> Conversation:
    """One store per conversation, one commit per turn at the turn's time.

    One store each: a store's commit times only move forward, and the
    conversations' dates overlap. With an ``embedder``, each commit embeds its turn.
    """
    store = memcommit.open(":memory:", embedder=embedder)
    tenant = sample["sample_id"]
    conv = turns(sample)
    ids: dict[str, str] = {}
    for dia_id, session, text, created, _speaker in conv:
        with store.commit(message=f"{tenant} {dia_id}", now=created) as tx:
            ids[tx.add(text, kind="event", tenant=tenant, session=session).id] = dia_id
    qs, _ = questions(sample, {t[0] for t in conv})
    qs = [Question(typed(q.text), q.evidence, q.category, q.ability, q.date) for q in qs]
    speakers = {t[0]: t[4] for t in conv}
    return Conversation(tenant, store, ids, speakers, qs, conv[-1][3] + timedelta(days=1))


def run_memcommit(
    conversations: list[Conversation], scorer: Any, *, hybrid: bool | None = False
) -> Scores:
    """Recall the top 10 for every question of every conversation with ``scorer``.

    ``hybrid`` False ranks by words even where the store has an embedder.
    """
    scores = Scores()
    for conv in conversations:
        for question in conv.questions:
            ctx = recall(
                conv.store,
                question.text,
                tenant=conv.name,
                max_records=10,
                scorer=scorer,
                hybrid=hybrid,
                now=question.date or conv.now,
            )
            ranked = [conv.dia_ids[m.id] for m in ctx.selected]
            scores.add(conv.name, question, ranked, conv.speakers)
    return scores


def run_bm25s(samples: list[dict], stem: bool, typed: Callable[[str], str] = str) -> Scores:
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
        speakers = {t[0]: t[4] for t in conv}
        for question in qs:
            tokens = bm25s.tokenize(
                [typed(question.text)], stopwords="en", stemmer=stemmer, show_progress=False
            )
            if not tokens.vocab:
                scores.add(sample["sample_id"], question, [], speakers)
                continue
            docs, _ = retriever.retrieve(tokens, k=min(10, len(corpus)), show_progress=False)
            ranked = [conv[i][0] for i in docs[0].tolist()]
            scores.add(sample["sample_id"], question, ranked, speakers)
    return scores


def table(results: dict[str, dict], groups: tuple[str, ...] = ("by_category",)) -> str:
    """Systems side by side: overall, then each group asked for."""
    rows = []
    for name, summary in results.items():
        rows.append((name, "all", summary))
        rows += [(name, label, s) for group in groups for label, s in summary[group].items()]
    width = max([15] + [len(label) + 2 for _, label, _ in rows])
    head = f"{'system':<17}{'scope':<{width}}{'recall@5':>10}{'recall@10':>11}{'hit@10':>9}{'n':>6}"
    lines = [head]
    for name, label, s in rows:
        lines.append(
            f"{name:<17}{label:<{width}}{s['recall@5']:>10.3f}{s['recall@10']:>11.3f}"
            f"{s['hit@10']:>9.3f}{s['questions']:>6}"
        )
    return "\n".join(lines)


def ablation_table(default: dict, ablated: dict[str, dict]) -> str:
    """recall@10 of the default scorer and with each component off (change in brackets)."""
    labels = list(default["by_category"])
    lines = [f"{'scorer':<20}{'all':>16}" + "".join(f"{label:>22}" for label in labels)]

    def cell(summary: dict, base: dict | None) -> str:
        value = summary["recall@10"]
        if base is None:
            return f"{value:.3f}"
        return f"{value:.3f} ({value - base['recall@10']:+.3f})"

    lines.append(
        f"{'memory (default)':<20}{cell(default, None):>16}"
        + "".join(f"{cell(default['by_category'][label], None):>22}" for label in labels)
    )
    for component, summary in ablated.items():
        lines.append(
            f"{'  without ' + component:<20}{cell(summary, default):>16}"
            + "".join(
                f"{cell(summary['by_category'][label], default['by_category'][label]):>22}"
                for label in labels
            )
        )
    return "\n".join(lines)


#: Fusion settings tried by --fusion-grid: (label, HybridScorer keywords).
FUSION_GRID = (
    ("rrf k=60 equal", {"k": 60, "dense_weight": 1.0}),
    ("rrf k=10 equal", {"dense_weight": 1.0}),
    ("rrf k=20 dense .5", {"k": 20}),
    ("rrf k=10 depth 30", {"depth": 30}),
    ("rrf k=10 dense .3", {"dense_weight": 0.3}),
)


def hybrid_systems(
    conversations: list[Conversation], embedder: Any, scorer: Any, grid: bool
) -> dict[str, Callable[[], Scores]]:
    """The hybrid recall, the dense ranking alone, and (``grid``) each fusion setting tried."""

    def fused(**settings: Any) -> Callable[[], Scores]:
        lexical = MemoryScorer() if scorer in (None, "memory") else scorer
        return lambda: run_memcommit(
            conversations, fused_scorer(embedder, lexical, **settings), hybrid=True
        )

    systems = {
        "memcommit+dense": lambda: run_memcommit(conversations, scorer, hybrid=True),
        "dense": fused(lexical_weight=0.0),
    }
    if grid:
        systems.update({label: fused(**settings) for label, settings in FUSION_GRID})
    return systems


def evaluate(
    samples: list[dict],
    scorer: Any,
    *,
    ablation: bool,
    typed: Callable[[str], str] = str,
    embedder: Any = None,
    grid: bool = False,
) -> dict[str, Any]:
    """Every system, and the ablation of the default scorer, over ``samples``."""
    conversations = [load(sample, typed=typed, embedder=embedder) for sample in samples]
    try:
        systems: dict[str, Callable[[], Scores]] = {
            "memcommit": lambda: run_memcommit(conversations, scorer),
            **(hybrid_systems(conversations, embedder, scorer, grid) if embedder else {}),
            "memcommit-tfidf": lambda: run_memcommit(conversations, "tfidf"),  # the seed's
            "bm25s": lambda: run_bm25s(samples, stem=False, typed=typed),
            "bm25s+stem": lambda: run_bm25s(samples, stem=True, typed=typed),
        }
        out: dict[str, Any] = {"systems": {name: run().summary() for name, run in systems.items()}}
        if ablation:
            out["ablation"] = {
                component: run_memcommit(conversations, MemoryScorer(**off)).summary()
                for component, off in ABLATION.items()
            }
    finally:
        for conv in conversations:
            conv.store.close()
    out["skipped"] = sum(questions(s, {t[0] for t in turns(s)})[1] for s in samples)
    out["conversations"] = [s["sample_id"] for s in samples]
    return out


def splits(datasets: list[Path]) -> dict[str, list[dict]]:
    """The conversations of ``datasets`` as "dev" (the dev file's samples) and "held-out"."""
    dev_file = default_dataset()
    dev_ids = (
        {s["sample_id"] for s in json.loads(dev_file.read_text())} if dev_file.is_file() else set()
    )
    seen: dict[str, dict] = {}
    for path in datasets:
        for sample in json.loads(path.read_text()):
            seen.setdefault(sample["sample_id"], sample)
    out: dict[str, list[dict]] = {}
    for sample_id, sample in seen.items():
        out.setdefault("dev" if sample_id in dev_ids else "held-out", []).append(sample)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="*", type=Path, help="LoCoMo JSON files")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--scorer", default=None, help="memcommit scorer (default: recall's)")
    parser.add_argument("--no-ablation", action="store_true", help="skip the ablation runs")
    parser.add_argument("--messy", action="store_true", help="questions typed as in chat")
    parser.add_argument("--embedder", default=None, help="also rank by meaning: local, hash, ...")
    parser.add_argument("--fusion-grid", action="store_true", help="try each fusion setting")
    parser.add_argument("--conversations", type=int, default=None, help="the first N of a split")
    args = parser.parse_args(argv)
    datasets = args.datasets or [default_dataset()]
    ablation = not args.no_ablation and args.scorer in (None, "memory")
    embedder = None
    if args.embedder:
        from memcommit.embedding import resolve
        from vector_cache import CachedEmbedder

        embedder = CachedEmbedder(resolve(args.embedder))
    results = {
        split: evaluate(
            samples[: args.conversations],
            args.scorer,
            ablation=ablation,
            typed=messy if args.messy else str,
            embedder=embedder,
            grid=args.fusion_grid,
        )
        for split, samples in splits(datasets).items()
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for split, result in results.items():
        print(
            f"\nLoCoMo {split}{' (messy questions)' if args.messy else ''}: "
            f"{len(result['conversations'])} conversations "
            f"({', '.join(result['conversations'])}), categories 1-4, "
            f"{result['skipped']} questions without a known evidence turn skipped"
        )
        print(table(result["systems"]))
        if any(summary["by_ability"] for summary in result["systems"].values()):
            print("\nby the dataset's ability / question type")
            print(table(result["systems"], ("by_ability",)))
        if any(summary["roles"] for summary in result["systems"].values()):
            print("\nwho said the retrieved turns (share of each system's top 10)")
            for name, summary in result["systems"].items():
                shares = ", ".join(
                    f"{role} {share:.2f}" for role, share in summary["roles"].items()
                )
                print(f"{name:<17}{shares}")
        mine = {"memcommit": result["systems"]["memcommit"]}
        print("\nmemcommit by question length and by evidence count")
        print(table(mine, ("by_length", "by_evidence")))
        if "ablation" in result:
            print("\nAblation: recall@10 with one component of the default scorer off")
            print(ablation_table(result["systems"]["memcommit"], result["ablation"]))
        print("\nrecall@10 per conversation")
        print(
            table(
                {
                    "memcommit": mine["memcommit"],
                    **{name: result["systems"][name] for name in ("bm25s+stem",)},
                },
                ("by_conversation",),
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
