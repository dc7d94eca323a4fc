"""Which speakers a query names, and the boost for what they said: speaker awareness.

A question about a person ("What pets does Nate have?") is mostly answered by
what that person said. A memory's speaker (`index.text.speaker_of`, read when
it is indexed) is its ``metadata["speaker"]`` when set, else the name before a
colon that opens its text, the way chat logs and transcripts are written ("Nate:
I just got a new puppy"): one to three words starting with a letter, then ":"
and a space. Names compare lowercased, so a query typed in lowercase ("what did
nate adopt") names the speaker too.

In a chat between a user and an assistant the speakers are roles, and a
question that names no one is the user asking about their own conversation:
what the user said (their plans, facts, preferences, instructions) answers it,
and the assistant's replies around it are suggestions. So when a query names no
speaker, the asker's role (`ASKERS`) counts as named. A conversation between
people, whose speakers are names, has no such role and is unaffected.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from memcommit.recall.index.columns import Codes
from memcommit.recall.index.text import STOP_WORDS, words

#: Speaker names that are the role of the person asking (lowercased, as stored).
ASKERS = frozenset({"user", "human"})


def named_speakers(query_words: Iterable[str], speakers: Codes) -> list[int]:
    """Codes of the speakers ``query_words`` name, in code order.

    A speaker is named when one word of its name (three letters or more, not a
    stop word) is a word of the query: "Nate" names "nate", "Smith" names
    "dr smith". A query that names no one names the asker's role (`ASKERS`),
    where the tenant has one.
    """
    asked = set(query_words)
    named = []
    for code, name in enumerate(speakers.values):
        if any(len(w) >= 3 and w not in STOP_WORDS and w in asked for w in words(str(name))):
            named.append(code)
    return named or [code for code, name in enumerate(speakers.values) if name in ASKERS]


def speaker_factor(
    speaker: np.ndarray, docs: np.ndarray, named: list[int], weight: float
) -> np.ndarray:
    """``1 + weight`` for the ``docs`` said by a named speaker, 1 for the rest."""
    factor = np.ones(len(docs))
    if weight and named:
        factor[np.isin(speaker[docs], named)] += weight
    return factor
