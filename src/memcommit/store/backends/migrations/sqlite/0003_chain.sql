-- The hash chain (store/backends/seals.py, docs/verification.md): each commit's hash
-- covers its parent's hash, its own fields and the digest of every version it wrote.
-- A version keeps its salt and digest; purge erases the salt with the body and keeps the
-- body's hash in `erased`. A store that had commits before this migration has them
-- hashed once, right after it, by the backend (`chain.seal_history`), which records in
-- the state row ('memcommit', 'chain') the newest commit it hashed that way.

ALTER TABLE commits ADD COLUMN hash TEXT;
ALTER TABLE versions ADD COLUMN salt TEXT;
ALTER TABLE versions ADD COLUMN digest TEXT;
ALTER TABLE versions ADD COLUMN erased TEXT;
