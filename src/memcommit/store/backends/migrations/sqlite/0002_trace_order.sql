-- Traces are listed (and paged) in the order they began: (started_seq, id). The
-- index is written once per trace begun; step and finish updates leave it alone.

CREATE INDEX traces_order ON traces (started_seq, id);
