"""The dense ranking's focus: who the query names and when it asks about, for any memory.

A cosine knows what a memory is about, not who said it or when. The lexical
scorer multiplies a match by its speaker factor (`speakers.speaker_factor`: the
query names who said it, or, naming no one, the memory is the asker's own) and
its date factor (`when.date_factor`: it was made on a day or in a period the query
names). Both are read from the index for any memory, so the dense ranking borrows
them: `fusion.focused` ranks the ``width`` nearest memories by how far each stands above
the farthest of them, times its factors. A memory barely inside the window gains
little from its factors; one near the top of it, said by the named speaker on the
asked day, moves up. Measured on LoCoMo's dev split and BEAM 100K (docs/recall.md).
"""

from __future__ import annotations

import numpy as np

from memcommit.recall.index.text import words
from memcommit.recall.scoring import params
from memcommit.recall.scoring.cosine import Query
from memcommit.recall.scoring.speakers import named_speakers, speaker_factor
from memcommit.recall.scoring.when import asked_times, date_factor


class Focus:
    """The speaker and date factors of ``query`` for any documents, at the given weights.

    The weights are the lexical scorer's (``MemoryScorer``'s ``speaker`` and
    ``dates``); 0 turns a factor off, and both at 0 leave the cosine ranking as it is.
    """

    def __init__(self, speaker: float, dates: float) -> None:
        self.speaker = params.weight("speaker", speaker)
        self.dates = params.weight("dates", dates)

    def factors(self, query: Query, docs: np.ndarray) -> np.ndarray:
        """The product of the speaker and date factors of each of ``docs``."""
        index = query.index
        out = np.ones(len(docs))
        if self.speaker:
            named = named_speakers(words(query.text), index.speakers)
            out *= speaker_factor(index.speaker.data, docs, named, self.speaker)
        if self.dates:
            out *= date_factor(
                index.created.data, docs, asked_times(query.text, query.now), self.dates
            )
        return out
