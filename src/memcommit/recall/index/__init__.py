"""The index wing: each tenant's memories as an inverted index, in memory and on disk.

    text, stem      a memory's terms, their stems, who spoke
    columns         growable numpy columns and string code tables
    table           the column table: every filter column once, the rest derived
    vocabulary      term text <-> term id, and each term's stem
    postings        forward lists and CSR postings (main + delta), document frequencies
    statistics      log-tf weights, idfs and the cached TF-IDF document norms
    keys, order     the latest document per key; birth order and session links
    snapshot        Snapshot (read-only columns of one moment), Exported (a file's arrays)
    tenant          TenantIndex: the parts above kept in step for one tenant
    sections, blobs a snapshot's arrays checked a block at a time; strings read in place
    persist         the snapshot file: stamped, mapped on open, written atomically
    files           the snapshot folder's files: atomic writes, killed writers' leftovers, erasure
    cache, sizes    the open tenants within a byte budget (least recent out); what each holds
    live            a store's live index: tenants opened once, caught up, saved, erased on purge

Nothing here ranks or packs, and nothing imports the scoring or pipeline wings:
the scoring wing reads these arrays, the pipeline filters on their columns.
"""
