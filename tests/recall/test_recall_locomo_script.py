"""benchmarks/locomo_eval.py on a small conversation of its own (never the licensed data).

The script must group by category (leaving out empty ones), question length,
evidence count and conversation, split dev from held-out conversations, and run
the ablation of the default scorer in the same run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "locomo_eval.py"


def sample(sample_id: str) -> dict:
    """A two-session conversation in LoCoMo's format, with questions of categories 1, 2, 4, 5."""
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Max!"},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "What breed is it?"},
                {"speaker": "Ann", "dia_id": "D1:3", "text": "A beagle, he loves the beach."},
            ],
            "session_2_date_time": "10:00 am on 3 June, 2023",
            "session_2": [
                {"speaker": "Bob", "dia_id": "D2:1", "text": "I ran a marathon yesterday."},
                {"speaker": "Ann", "dia_id": "D2:2", "text": "Wow, how long did it take?"},
                {"speaker": "Bob", "dia_id": "D2:3", "text": "Four hours, my best time."},
            ],
        },
        "qa": [
            {"question": "What pet did Ann adopt?", "evidence": ["D1:1"], "category": 4},
            {
                "question": "What breed is Ann's puppy and where does it like to go?",
                "evidence": ["D1:1", "D1:3"],
                "category": 1,
            },
            {"question": "When did Bob run a marathon?", "evidence": ["D2:1"], "category": 2},
            {"question": "Does Bob have a cat?", "evidence": [], "category": 5},
            {"question": "Which day?", "evidence": ["D9:9"], "category": 4},  # unknown: skipped
        ],
    }


def run(tmp_path: Path, *args: str) -> dict:
    data = tmp_path / "conversations.json"
    data.write_text(json.dumps([sample("conv-a"), sample("conv-b")]))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(data), "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_groups_ablation_and_held_out_split(tmp_path):
    results = run(tmp_path)
    assert list(results) == ["held-out"]  # neither conversation is in the dev split
    held_out = results["held-out"]
    assert held_out["conversations"] == ["conv-a", "conv-b"]
    assert held_out["skipped"] == 2
    ours = held_out["systems"]["memcommit"]
    assert ours["questions"] == 6
    assert list(ours["by_category"]) == ["1 multi-hop", "2 temporal", "4 single-hop"]
    assert sum(g["questions"] for g in ours["by_length"].values()) == 6
    assert list(ours["by_evidence"]) == ["1 turn", "2 turns"]
    assert list(ours["by_conversation"]) == ["conv-a", "conv-b"]
    assert set(held_out["systems"]) == {"memcommit", "memcommit-tfidf", "bm25s", "bm25s+stem"}
    ablation = held_out["ablation"]
    assert list(ablation) == ["stems", "spelling", "neighbours", "session", "speaker", "dates"]
    assert all(summary["questions"] == 6 for summary in ablation.values())
    assert ours["recall@10"] == 1.0  # six turns, top ten: every evidence turn comes back


def test_messy_questions_and_no_ablation(tmp_path):
    results = run(tmp_path, "--messy", "--no-ablation")
    assert "ablation" not in results["held-out"]
    assert results["held-out"]["systems"]["memcommit"]["questions"] == 6


def test_messy_typing_is_deterministic():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from locomo_eval import messy
    finally:
        sys.path.remove(str(SCRIPT.parent))
    assert messy("What did Caroline research?") == "what did carloine research"  # first longest
    assert messy("Why?") == "why"


def chat(sample_id: str) -> dict:
    """A user/assistant chat whose questions carry an ability, one of them its own date."""
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": "user",
            "speaker_b": "assistant",
            "session_1_date_time": "12:00 pm on 1 March, 2024",
            "session_1": [
                {"speaker": "user", "dia_id": "0", "text": "My Flask app needs a login page."},
                {"speaker": "assistant", "dia_id": "1", "text": "Use Flask-Login for sessions."},
                {"speaker": "user", "dia_id": "2", "text": "I deploy it on Fridays."},
            ],
        },
        "qa": [
            {
                "question": "What does my Flask app need?",
                "evidence": ["0"],
                "category": 4,
                "ability": "information_extraction",
            },
            {
                "question": "When do I deploy?",
                "evidence": ["2"],
                "category": 2,
                "question_type": "temporal_reasoning",
                "question_date": "2024-03-08T09:00:00+00:00",
            },
        ],
    }


def test_chat_roles_abilities_and_question_dates(tmp_path):
    data = tmp_path / "chats.json"
    data.write_text(json.dumps([chat("chat-a")]))
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(data), "--json", "--no-ablation"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    ours = json.loads(done.stdout)["held-out"]["systems"]["memcommit"]
    assert list(ours["by_ability"]) == ["information_extraction", "temporal_reasoning"]
    assert ours["roles"] == {"user": 0.6667, "assistant": 0.3333}  # all three turns, twice
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from locomo_eval import questions, session_time
    finally:
        sys.path.remove(str(SCRIPT.parent))
    asked, skipped = questions(chat("chat-a"), {"0", "1", "2"})
    assert skipped == 0
    assert [q.date for q in asked] == [None, session_time("2024-03-08T09:00:00+00:00")]


def test_locomo_questions_have_no_roles_or_abilities(tmp_path):
    ours = run(tmp_path, "--no-ablation")["held-out"]["systems"]["memcommit"]
    assert ours["roles"] == {} and ours["by_ability"] == {}
