"""Export a store's whole history as records, and load them into an empty store.

The records are what the backend keeps: every commit (seq, id, parent, time,
author, message, changes), every version of every memory (with the commit that
ended it), each trace, the use counts and the small state (tier statistics,
policy state). Loading writes them back through the
`Backend` protocol, so a round trip gives the same store, commit ids and
sequence numbers included, and ``migrate`` can copy between backends with the
same two functions. JSON Lines is the file format: one record per line.

    {"type": "header", "format": "memcommit-export", "version": 4, "commits": N}
    {"type": "commit", "seq": 1, ..., "hash": "<hex>"}   then the versions it wrote:
    {"type": "version", "id": ..., "version": 1, ..., "end_seq": 7, "salt": ..., "digest": ...}
    {"type": "trace", ...}                 after the last commit it refers to
    {"type": "usage", "id": ..., "count": 3, "first_tick": 1, "last_tick": 9}
    {"type": "state", "namespace": "tiers", "key": ..., "value": "<JSON text>"}
    {"type": "vector", "tenant": ..., "id": ..., "embedder": ..., "vector": "<base64>"}
    {"type": "trailer", "lines": L, "counts": {"commit": N, ...}, "sha256": "<hex>"}

The trailer is the file's last line: ``lines`` counts the lines before it,
``counts`` the records of each type, ``sha256`` is the digest of those lines'
UTF-8 bytes (newlines included). A file without it was cut short; a digest that
differs means a line was edited, reordered or dropped. That digest is a
checksum anyone can recompute; the evidence is the hash chain the export
carries (each commit's ``hash``, each version's ``salt``, ``digest`` and, once
purged, ``erased``: docs/verification.md). The import recomputes every hash
from the records and refuses a commit whose hash differs from the one
exported, and with ``expect`` a chain behind or forked from that witness.
`import_jsonl` refuses each of these, naming the line, before anything lands;
`export_file` writes a temporary file beside the target and renames it into
place only once it is complete.

A load is all or nothing: it runs in one backend transaction, checks every
record as it reads it (naming the line and the field of a bad one), and checks
the store's invariants before it lands.

The parts: the format's version and record types (`format`), the export
(`exporting`), the import (`importing`), the loader that turns records
back into commits (`loader`) and the stored vectors as records (`vectors`).
"""

from memcommit.store.transfer.exporting import (
    export_file,
    export_jsonl,
    records,
    snapshot,
    stored,
)
from memcommit.store.transfer.format import (
    FORMAT,
    READABLE,
    RECORD_TYPES,
    VERSION,
    Progress,
    Summary,
    backend_of,
)
from memcommit.store.transfer.importing import filling, import_jsonl, load, written
from memcommit.store.transfer.loader import replay_uses

__all__ = [
    "FORMAT",
    "READABLE",
    "RECORD_TYPES",
    "VERSION",
    "Progress",
    "Summary",
    "backend_of",
    "export_file",
    "export_jsonl",
    "filling",
    "import_jsonl",
    "load",
    "records",
    "replay_uses",
    "snapshot",
    "stored",
    "written",
]
