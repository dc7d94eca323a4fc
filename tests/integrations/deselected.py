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

OPENAI_AGENTS_SESSION: dict[str, str] = {}

#: Every list, under the suite it belongs to, as the run prints it.
ALL = {
    "langgraph-checkpoint-sqlite tests/test_store.py": LANGGRAPH_SQLITE_STORE,
    "langgraph-checkpoint-sqlite tests/test_async_store.py": LANGGRAPH_SQLITE_ASYNC_STORE,
    "langgraph-checkpoint tests/test_store.py": LANGGRAPH_STORE,
    "openai-agents tests/memory/test_session.py": OPENAI_AGENTS_SESSION,
}
