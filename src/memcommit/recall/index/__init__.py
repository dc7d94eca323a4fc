"""The index wing: each tenant's memories as an inverted index, in memory and on disk.

    text, stem      a memory's terms, their stems, who spoke
    columns         growable numpy columns and string code tables
    vocabulary      term text <-> term id, and each term's stem
    tenant          TenantIndex: postings, columns and statistics of one tenant
    sections, blobs a snapshot's arrays checked a block at a time; strings read in place
    persist         the snapshot file: stamped, mapped on open, written atomically
    files           the snapshot folder's files: atomic writes, killed writers' leftovers, erasure
    live            a store's live index: tenants opened once, caught up, saved, erased on purge

Nothing here ranks or packs: the scoring wing reads these arrays, the pipeline
filters on their columns.
"""
