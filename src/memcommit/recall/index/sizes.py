"""What the parts of a tenant index cost in memory, for the cache's byte budget.

Numpy arrays count their buffers (a section of a snapshot counts the bytes it
maps: touched pages are resident). Python dicts, lists and strings are counted
by a cost per entry measured with ``tracemalloc`` on CPython 3.11 (a dict entry
with its key string and value, a list slot with its object); an object of the
index counts `OBJECT`. Estimates, not audits: `tests/recall/test_cache.py`
holds them within a factor of what ``tracemalloc`` sees.
"""

from __future__ import annotations

import numpy as np

#: A dict entry keyed by a short string (term, id) with an int value, the string included.
ENTRY = 100
#: A list slot: a reference to an object counted elsewhere, or a small boxed int.
SLOT = 16
#: A short list of ints (a stem's terms added since the snapshot).
LIST = 72
#: A Python object of the index (a column, a section, a table) with its attributes.
OBJECT = 400


def array_bytes(array: np.ndarray | None) -> int:
    """The bytes of ``array``'s buffer (0 for None); a view counts the buffer it shows."""
    return 0 if array is None else int(array.nbytes)
