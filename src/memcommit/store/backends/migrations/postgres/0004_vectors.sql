-- Embeddings of memories (memcommit.embedding), kept so no host or process embeds a text
-- twice: one row per (tenant, memory, embedder name), the unit float32 vector (little
-- endian, dims * 4 bytes) of the content the memory has held since `version`. A commit
-- that changes a memory's content, or purges it, deletes its rows in the same
-- transaction; other new versions (a move, an archive) keep them. The key leads with the
-- tenant, so one tenant's vectors are one range (and a partition where tables are split
-- by tenant). Derived data: not sealed in the hash chain.

CREATE TABLE vectors (
    tenant   text COLLATE "C" NOT NULL,
    id       text COLLATE "C" NOT NULL,
    embedder text COLLATE "C" NOT NULL,
    version  bigint NOT NULL,
    dims     integer NOT NULL,
    vector   bytea NOT NULL,
    PRIMARY KEY (tenant, id, embedder)
);
