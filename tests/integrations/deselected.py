"""Upstream tests left out of the framework suites, each with the reason; every run prints it.

Only tests of the reference implementation's private internals are here: its
SQL, its connection, its migrations list, its private helper functions.
Everything that goes through the public protocol runs against memcommit.
"""

from __future__ import annotations

#: Pinned versions of the suites (the sdists are fetched at test time).
VERSIONS = {
    "langgraph-checkpoint-sqlite": "3.1.2",
    "langgraph-checkpoint": "4.3.2",
    "openai-agents": "0.24.0",
    "haystack-ai": "3.4.1",
    "autogen-core": "0.7.5",
    "crewai": "1.15.30",
    # npm, installed at test time (test_upstream_mcp_conformance.py): the suite and its Node
    "@modelcontextprotocol/conformance": "0.1.16",
    "node": "22.23.3",
}

LANGGRAPH_SQLITE_STORE = {
    "test_vector_store_initialization": "reads SqliteStore's own connection and vector tables",
    "test_nonnull_migrations": "checks SqliteStore.MIGRATIONS, its own SQL",
    "test_escape_glob_literal": "unit test of SqliteStore's private GLOB escaping",
    "test_namespace_match_pattern": "unit test of SqliteStore's private regex builder",
    "test_list_namespaces_prefix_uses_indexable_condition": "inspects SqliteStore's SQL text",
}

LANGGRAPH_SQLITE_ASYNC_STORE = {
    "test_vector_store_initialization": "reads AsyncSqliteStore's own connection and tables",
}

LANGGRAPH_STORE: dict[str, str] = {}

_CONNECTIONS = "inspects SQLiteSession's per-thread sqlite3 connections"
_RAW_ROWS = "writes corrupt rows into SQLiteSession's own table with raw SQL"
_RAW_TABLES = "drops or probes SQLiteSession's own tables with raw SQL"
OPENAI_AGENTS_SESSION = {
    "test_sqlite_session_close_closes_worker_thread_connections": _CONNECTIONS,
    "test_sqlite_session_reaps_connections_from_exited_worker_threads": _CONNECTIONS,
    "test_sqlite_session_closes_retired_connections_before_the_next_allocation": _CONNECTIONS,
    "test_sqlite_session_keeps_connections_of_live_worker_threads": _CONNECTIONS,
    "test_sqlite_session_close_retries_quarantined_connection": _CONNECTIONS,
    "test_sqlite_session_rollback_failure_evicts_connection": _CONNECTIONS,
    "test_sqlite_session_post_commit_cancellation_propagates_after_known_outcome": (
        "swaps a pausing sqlite3 connection into SQLiteSession's private pool"
    ),
    "test_sqlite_session_file_lock_is_shared_across_instances": (
        "checks SQLiteSession's class-level file-lock table"
    ),
    "test_sqlite_session_closed_rejects_empty_add_items": (
        "matches SQLiteSession's own error text (ours raises StoreClosed; tested here)"
    ),
    "test_sqlite_session_pop_item_skips_corrupt_most_recent": _RAW_ROWS,
    "test_sqlite_session_pop_item_returns_none_after_dropping_only_corrupt_rows": _RAW_ROWS,
    "test_sqlite_session_get_items_limit_skips_corrupt_newest_rows": _RAW_ROWS,
    "test_sqlite_session_get_items_session_settings_limit_skips_corrupt_rows": _RAW_ROWS,
    "test_sqlite_session_failed_add_items_releases_write_lock": _RAW_TABLES,
    "test_sqlite_session_failed_clear_session_rolls_back": _RAW_TABLES,
    "test_sqlite_session_failed_pop_item_releases_write_lock": _RAW_TABLES,
}

_NO_INDEX = (
    "calls delete_all_documents(recreate_index=...): a memcommit index is a scope, there is"
    " no index to recreate (the kit skips it for such stores)"
)
HAYSTACK = {
    "TestDocumentStore.test_delete_all_documents_without_recreate_index": _NO_INDEX,
    "TestDocumentStore.test_delete_all_documents_with_recreate_index": _NO_INDEX,
    "TestAsyncDocumentStore.test_delete_all_documents_without_recreate_index_async": _NO_INDEX,
    "TestAsyncDocumentStore.test_delete_all_documents_with_recreate_index_async": _NO_INDEX,
}

_LIST_CONFIG = (
    "checks ListMemory's own component config (its provider path, its memory_contents field);"
    " MemcommitMemory's dump/load round trip is tested in test_autogen.py"
)
AUTOGEN_MEMORY = {
    "test_memory_component_load_config_from_base_model": _LIST_CONFIG,
    "test_memory_component_dump_config_to_base_model": _LIST_CONFIG,
}

CREWAI = {
    "test_percent_underscore_and_backslash_in_scope_names_match_literally": (
        "expects a scope prefix to match inside a label (LanceDB's LIKE: '/share\\' finds"
        " '/share\\docs'); MemcommitStorage matches whole labels, so '/tenant-a' never reads"
        " '/tenant-ab' (its literal %, _ and \\ matching is tested in test_crewai.py)"
    ),
}

_FIXTURE = "calls the suite's reference-server fixture {!r}, which memcommit does not serve"
_PASSES_ANYWAY = (
    "; it passes all the same, because memcommit's tool error for an unknown tool meets its check"
)
#: Scenarios of the MCP conformance suite that call what only its reference server has
#: (test_* tools and prompts, test:// resources): a memory server is not asked to serve them.
MCP_CONFORMANCE = {
    "tools-call-simple-text": _FIXTURE.format("test_simple_text") + _PASSES_ANYWAY,
    "tools-call-error": _FIXTURE.format("test_error_handling") + _PASSES_ANYWAY,
    "tools-call-image": _FIXTURE.format("test_image_content"),
    "tools-call-audio": _FIXTURE.format("test_audio_content"),
    "tools-call-embedded-resource": _FIXTURE.format("test_embedded_resource"),
    "tools-call-mixed-content": _FIXTURE.format("test_multiple_content_types"),
    "tools-call-with-logging": _FIXTURE.format("test_tool_with_logging"),
    "tools-call-with-progress": _FIXTURE.format("test_tool_with_progress"),
    "tools-call-sampling": _FIXTURE.format("test_sampling"),
    "tools-call-elicitation": _FIXTURE.format("test_elicitation"),
    "elicitation-sep1034-defaults": _FIXTURE.format("test_elicitation_sep1034_defaults"),
    "elicitation-sep1330-enums": _FIXTURE.format("test_elicitation_sep1330_enums"),
    "resources-read-text": _FIXTURE.format("test://static-text"),
    "resources-read-binary": _FIXTURE.format("test://static-binary"),
    "resources-templates-read": _FIXTURE.format("test://template/123/data"),
    "prompts-get-simple": _FIXTURE.format("test_simple_prompt"),
    "prompts-get-with-args": _FIXTURE.format("test_prompt_with_arguments"),
    "prompts-get-embedded-resource": _FIXTURE.format("test_prompt_with_embedded_resource"),
    "prompts-get-with-image": _FIXTURE.format("test_prompt_with_image"),
}

#: Every list, under the suite it belongs to, as the run prints it.
ALL = {
    "langgraph-checkpoint-sqlite tests/test_store.py": LANGGRAPH_SQLITE_STORE,
    "langgraph-checkpoint-sqlite tests/test_async_store.py": LANGGRAPH_SQLITE_ASYNC_STORE,
    "langgraph-checkpoint tests/test_store.py": LANGGRAPH_STORE,
    "openai-agents tests/memory/test_session.py": OPENAI_AGENTS_SESSION,
    "haystack-ai haystack/testing/document_store*.py": HAYSTACK,
    "autogen-core tests/test_memory.py": AUTOGEN_MEMORY,
    "crewai tests/memory/*.py": CREWAI,
    "@modelcontextprotocol/conformance server": MCP_CONFORMANCE,
}
