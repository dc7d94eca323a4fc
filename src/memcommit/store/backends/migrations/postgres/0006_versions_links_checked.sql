-- A version's seq and end_seq name commits by construction: the statement that writes
-- a version writes the commit it names in the same transaction, under the writers'
-- lock (an unordered commit: both in one statement, `postgres_sequence`), and a purge
-- never deletes a commit. The foreign keys checked that again on every insert and
-- update, under the lock (a trigger's query and a row lock on the commit, WAL-logged:
-- about a tenth of the server's work in a one-memory commit). `check()` keeps the rule
-- instead, as on SQLite (docs/postgres.md, "Many writers").
ALTER TABLE versions DROP CONSTRAINT IF EXISTS versions_seq_fkey;
ALTER TABLE versions DROP CONSTRAINT IF EXISTS versions_end_seq_fkey;
