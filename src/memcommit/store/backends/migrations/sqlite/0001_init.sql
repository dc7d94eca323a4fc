-- Commits, memory versions, traces, use counts and small state.
-- A memory's present is the row with end_seq IS NULL; as of commit S it is the
-- row with seq <= S < end_seq. The partial indexes keep present reads off history.
-- Few b-trees per commit on purpose: each one costs a page write per transaction
-- (commit ids embed the seq, so they need no index; versions cluster on their key).

CREATE TABLE commits (
    seq     INTEGER PRIMARY KEY,
    id      TEXT NOT NULL,
    parent  TEXT,
    time    TEXT NOT NULL,
    author  TEXT NOT NULL,
    message TEXT NOT NULL,
    changes TEXT NOT NULL
);

CREATE TABLE versions (
    id             TEXT NOT NULL,
    version        INTEGER NOT NULL,
    seq            INTEGER NOT NULL REFERENCES commits (seq),
    end_seq        INTEGER REFERENCES commits (seq),
    content        TEXT NOT NULL,
    kind           TEXT NOT NULL,
    scope          TEXT NOT NULL,
    tenant         TEXT NOT NULL,
    session        TEXT,
    mkey           TEXT,
    importance     REAL NOT NULL,
    tags           TEXT NOT NULL,
    project        TEXT,
    always         INTEGER NOT NULL,
    token_count    INTEGER,
    trace_id       TEXT,
    step           INTEGER,
    metadata       TEXT NOT NULL,
    valid_from     TEXT,
    valid_to       TEXT,
    superseded_by  TEXT,
    status         TEXT NOT NULL,
    tier           TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    created_commit INTEGER NOT NULL,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (id, version)
) WITHOUT ROWID;
CREATE INDEX versions_current ON versions (tenant, scope, kind) WHERE end_seq IS NULL;
CREATE INDEX versions_key ON versions (tenant, mkey) WHERE mkey IS NOT NULL AND end_seq IS NULL;
CREATE INDEX versions_trace ON versions (trace_id, step) WHERE trace_id IS NOT NULL;

CREATE TABLE traces (
    id          TEXT PRIMARY KEY,
    tenant      TEXT NOT NULL,
    scope       TEXT NOT NULL,
    session     TEXT,
    status      TEXT NOT NULL,
    last_step   INTEGER NOT NULL,
    started_seq INTEGER NOT NULL REFERENCES commits (seq),
    started_at  TEXT NOT NULL,
    ended_seq   INTEGER REFERENCES commits (seq),
    ended_at    TEXT
);
CREATE INDEX traces_tenant ON traces (tenant, started_seq);

CREATE TABLE usage (
    id         TEXT PRIMARY KEY,
    count      INTEGER NOT NULL,
    first_tick INTEGER NOT NULL,
    last_tick  INTEGER NOT NULL
);

CREATE TABLE state (
    namespace TEXT NOT NULL,
    name      TEXT NOT NULL,
    value     TEXT NOT NULL,
    PRIMARY KEY (namespace, name)
);
