"""Helpers the workbench's browser tests share (imported by name: tests/ is no package)."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

from memcommit.workbench import WorkbenchServer


def running(server: WorkbenchServer) -> Iterator[str]:
    """Serve in a background thread for the duration of a fixture; yield the URL."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def open_page(pg, url: str) -> None:
    """Load the workbench and wait until its first answer is on screen."""
    pg.goto(url)
    pg.wait_for_function("() => document.body.dataset.started === '1'")
    settle(pg)


def settle(pg) -> None:
    """Wait until the newest recompute has come back and been drawn."""
    pg.wait_for_function("() => document.body.dataset.busy !== '1'")


def get(url: str, path: str, method: str = "GET", host: str | None = None):
    """One raw request (no client-side path normalization); returns (status, headers, body)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        headers = {} if host is None else {"Host": host}
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()
