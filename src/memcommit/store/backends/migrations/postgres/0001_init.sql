-- Commits, memory versions, traces, use counts and small state, in the store's own schema
-- (the connection's search_path names it). Same rows as the SQLite backend, native types:
-- a memory's present is the row with end_seq IS NULL; as of commit S it is the row with
-- seq <= S < end_seq. Partial indexes keep present reads (recall, find) off the history.
-- tags, metadata and changes stay JSON text so both backends return them byte for byte;
-- text keys use the "C" collation so ORDER BY id sorts by bytes, as SQLite does.

CREATE TABLE commits (
    seq     bigint PRIMARY KEY,
    id      text NOT NULL,
    parent  text,
    time    timestamptz NOT NULL,
    author  text NOT NULL,
    message text NOT NULL,
    changes text NOT NULL
);

CREATE TABLE versions (
    id             text COLLATE "C" NOT NULL,
    version        bigint NOT NULL,
    seq            bigint NOT NULL REFERENCES commits (seq),
    end_seq        bigint REFERENCES commits (seq),
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
    PRIMARY KEY (id, version)
);
CREATE INDEX versions_current ON versions (tenant, scope, kind) WHERE end_seq IS NULL;
CREATE INDEX versions_key ON versions (tenant, mkey) WHERE mkey IS NOT NULL AND end_seq IS NULL;
CREATE INDEX versions_trace ON versions (trace_id, step) WHERE trace_id IS NOT NULL;

CREATE TABLE traces (
    id          text COLLATE "C" PRIMARY KEY,
    tenant      text COLLATE "C" NOT NULL,
    scope       text NOT NULL,
    session     text,
    status      text NOT NULL,
    last_step   bigint NOT NULL,
    started_seq bigint NOT NULL REFERENCES commits (seq),
    started_at  timestamptz NOT NULL,
    ended_seq   bigint REFERENCES commits (seq),
    ended_at    timestamptz
);
CREATE INDEX traces_tenant ON traces (tenant, started_seq);

CREATE TABLE usage (
    id         text PRIMARY KEY,
    count      bigint NOT NULL,
    first_tick bigint NOT NULL,
    last_tick  bigint NOT NULL
);

CREATE TABLE state (
    namespace text NOT NULL,
    name      text NOT NULL,
    value     text NOT NULL,
    PRIMARY KEY (namespace, name)
);
