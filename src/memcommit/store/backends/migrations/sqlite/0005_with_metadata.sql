-- A purge follows the metadata links of the tenant's current memories to the summaries
-- built from what it erases (store/provenance.py); most memories have no metadata. This
-- index finds the ones that do without reading the others, so a purge's transaction,
-- which holds the writers' lock, stays short however large the tenant grows.

CREATE INDEX versions_with_metadata ON versions (tenant) WHERE end_seq IS NULL AND metadata <> '{}';
