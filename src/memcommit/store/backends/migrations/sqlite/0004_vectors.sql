-- Embeddings of memories (memcommit.embedding), kept so no host or process embeds a text
-- twice: one row per (tenant, memory, embedder name), the unit float32 vector (little
-- endian, dims * 4 bytes) of the content the memory has held since `version`. A commit
-- that changes a memory's content, or purges it, deletes its rows in the same
-- transaction; other new versions (a move, an archive) keep them. The key leads with the
-- tenant, so one tenant's vectors are one range (and a partition where tables are split
-- by tenant). Derived data: not sealed in the hash chain. A rowid table, unlike
-- `versions`: a 384-dim vector is 1.5 KB, too big a row for a WITHOUT ROWID b-tree.

CREATE TABLE vectors (
    tenant   TEXT NOT NULL,
    id       TEXT NOT NULL,
    embedder TEXT NOT NULL,
    version  INTEGER NOT NULL,
    dims     INTEGER NOT NULL,
    vector   BLOB NOT NULL,
    PRIMARY KEY (tenant, id, embedder)
);
