-- Memory versions and their vectors partitioned by a hash of their tenant, in N
-- partitions each (versions_p00 .., vectors_p00 ..; one tenant's rows are in the
-- partitions of the same number, as both keys are text "C"). N is the opening's
-- `partitions` option (1-100, 64 by default), set as memcommit.partitions for this
-- transaction by the backend. A purge then rewrites only the partition that holds
-- its tenant (VACUUM FULL of one partition: docs/postgres.md, "Purge"), so the lock the
-- rewrite takes and the time it lasts are about 1/N of the table's, wherever the
-- store grows. A partitioned table's unique keys must hold its partition key: the
-- primary key becomes (id, version, tenant); ids are generated unique, so it keeps
-- the same rows unique as before. The rows move as they are; the indexes and foreign
-- keys are made again once they are in, with one more (versions_with_metadata, below).

ALTER TABLE versions RENAME TO versions_before_partitions;

CREATE TABLE versions (
    id             text COLLATE "C" NOT NULL,
    version        bigint NOT NULL,
    seq            bigint NOT NULL,
    end_seq        bigint,
    content        text NOT NULL,
    kind           text COLLATE "C" NOT NULL,
    scope          text COLLATE "C" NOT NULL,
    tenant         text COLLATE "C" NOT NULL,
    session        text COLLATE "C",
    mkey           text COLLATE "C",
    importance     double precision NOT NULL,
    tags           text NOT NULL,
    project        text,
    always         boolean NOT NULL,
    token_count    bigint,
    trace_id       text COLLATE "C",
    step           bigint,
    metadata       text NOT NULL,
    valid_from     timestamptz,
    valid_to       timestamptz,
    superseded_by  text,
    status         text NOT NULL,
    tier           text COLLATE "C" NOT NULL,
    created_at     timestamptz NOT NULL,
    created_commit bigint NOT NULL,
    updated_at     timestamptz NOT NULL,
    salt           text,
    digest         text,
    erased         text
) PARTITION BY HASH (tenant);

DO $$
DECLARE
    n integer := coalesce(nullif(current_setting('memcommit.partitions', true), ''), '64')::integer;
BEGIN
    FOR part IN 0..n - 1 LOOP
        EXECUTE format(
            'CREATE TABLE versions_p%s PARTITION OF versions'
            ' FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
            lpad(part::text, 2, '0'), n, part
        );
    END LOOP;
END
$$;

INSERT INTO versions (
    id, version, seq, end_seq, content, kind, scope, tenant, session, mkey, importance,
    tags, project, always, token_count, trace_id, step, metadata, valid_from, valid_to,
    superseded_by, status, tier, created_at, created_commit, updated_at, salt, digest,
    erased
) SELECT
    id, version, seq, end_seq, content, kind, scope, tenant, session, mkey, importance,
    tags, project, always, token_count, trace_id, step, metadata, valid_from, valid_to,
    superseded_by, status, tier, created_at, created_commit, updated_at, salt, digest,
    erased
FROM versions_before_partitions;
DROP TABLE versions_before_partitions;

ALTER TABLE versions ADD PRIMARY KEY (id, version, tenant);
ALTER TABLE versions ADD FOREIGN KEY (seq) REFERENCES commits (seq);
ALTER TABLE versions ADD FOREIGN KEY (end_seq) REFERENCES commits (seq);
CREATE INDEX versions_current ON versions (tenant, scope, kind) WHERE end_seq IS NULL;
CREATE INDEX versions_key ON versions (tenant, mkey) WHERE mkey IS NOT NULL AND end_seq IS NULL;
CREATE INDEX versions_trace ON versions (trace_id, step) WHERE trace_id IS NOT NULL;
-- the current memories with metadata, which a purge follows to their summaries (as the
-- SQLite migration of the same number): its transaction stays short in a large tenant
CREATE INDEX versions_with_metadata ON versions (tenant) WHERE end_seq IS NULL AND metadata <> '{}';
ANALYZE versions;

ALTER TABLE vectors RENAME TO vectors_before_partitions;
ALTER TABLE vectors_before_partitions RENAME CONSTRAINT vectors_pkey TO vectors_before_pkey;
CREATE TABLE vectors (
    tenant   text COLLATE "C" NOT NULL,
    id       text COLLATE "C" NOT NULL,
    embedder text COLLATE "C" NOT NULL,
    version  bigint NOT NULL,
    dims     integer NOT NULL,
    vector   bytea NOT NULL,
    PRIMARY KEY (tenant, id, embedder)
) PARTITION BY HASH (tenant);

DO $$
DECLARE
    n integer := coalesce(nullif(current_setting('memcommit.partitions', true), ''), '64')::integer;
BEGIN
    FOR part IN 0..n - 1 LOOP
        EXECUTE format(
            'CREATE TABLE vectors_p%s PARTITION OF vectors'
            ' FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
            lpad(part::text, 2, '0'), n, part
        );
    END LOOP;
END
$$;

INSERT INTO vectors SELECT tenant, id, embedder, version, dims, vector
FROM vectors_before_partitions;
DROP TABLE vectors_before_partitions;
ANALYZE vectors;
