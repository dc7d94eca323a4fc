"""The workbench's HTTP server: the page's static files and a small read-only JSON API.

Standard library only. Static files come from the package's ``static/`` folder,
looked up by exact name, so no request path can reach any other file. Every API
answer is JSON; a bad parameter is a 400 naming the field, the value and the bare reason
(which the page turns into a sentence about the control the user sees).
"""

from __future__ import annotations

import json
import mimetypes
import socket
import sys
import traceback
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from memcommit.errors import InvalidInput, MemcommitError, NotFound
from memcommit.workbench.results import ResultGone
from memcommit.workbench.source import WorkbenchSource

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")

#: The names a browser on this machine puts in the Host header of a loopback page.
LOCAL_NAMES = ("127.0.0.1", "localhost", "[::1]")

#: The port a URL leaves out: on it, browsers send the Host header without one.
HTTP_PORT = 80

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def load_static() -> dict[str, tuple[bytes, str]]:
    """Every file of the package's static folder, by name, with its content type."""
    folder = resources.files("memcommit.workbench") / "static"
    files = {}
    for entry in folder.iterdir():
        if entry.is_file() and not entry.name.startswith("."):
            kind = mimetypes.guess_type(entry.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind in ("application/javascript",):
                kind += "; charset=utf-8"
            files[entry.name] = (entry.read_bytes(), kind)
    return files


class WorkbenchServer(ThreadingHTTPServer):
    """A threading HTTP server that answers for one source (which does its own locking)."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], source: WorkbenchSource) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.source = source
        self.static = load_static()
        super().__init__(address, Handler)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def allowed_host(self, header: str | None) -> bool:
        """Refuse foreign Host headers on a loopback bind (DNS rebinding).

        On port 80 a browser sends the name alone (``Host: 127.0.0.1``).
        """
        if str(self.server_address[0]) not in LOCAL_HOSTS:
            return True
        port = self.server_address[1]
        allowed = {f"{name}:{port}" for name in LOCAL_NAMES}
        if port == HTTP_PORT:
            allowed.update(LOCAL_NAMES)
        return header in allowed


class Handler(BaseHTTPRequestHandler):
    """GET (and HEAD) only: the workbench reads, it never writes."""

    server: WorkbenchServer
    server_version = "memcommit-workbench"

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: requests are not worth a line each on the terminal."""

    def do_GET(self) -> None:
        self.answer(head=False)

    def do_HEAD(self) -> None:
        self.answer(head=True)

    def refuse_method(self) -> None:
        self.send_error_json(
            HTTPStatus.METHOD_NOT_ALLOWED,
            "method",
            self.command,
            "only GET and HEAD are answered",
            extra={"Allow": "GET, HEAD"},
        )

    do_POST = do_PUT = do_DELETE = do_PATCH = refuse_method

    def answer(self, *, head: bool) -> None:
        if not self.server.allowed_host(self.headers.get("Host")):
            reason = "is not this machine's loopback address"
            self.send_error_json(
                HTTPStatus.BAD_REQUEST, "host", self.headers.get("Host"), reason, head=head
            )
            return
        parts = urlsplit(self.path)
        path = parts.path
        if path in ("/", "/index.html"):
            self.send_static("index.html", head=head)
        elif path == "/favicon.ico":  # what browsers ask for before reading the page's link
            self.send_static("favicon.svg", head=head)
        elif path.startswith("/static/"):
            self.send_static(path[len("/static/") :], head=head)
        elif path.startswith("/api/"):
            self.send_api(path[len("/api/") :], parse_qs(parts.query, keep_blank_values=True), head)
        else:
            self.send_not_found(path, head)

    def send_not_found(self, path: str, head: bool) -> None:
        self.send_error_json(HTTPStatus.NOT_FOUND, "path", path, "not found", head=head)

    def send_static(self, name: str, *, head: bool) -> None:
        found = self.server.static.get(name)
        if found is None:
            self.send_not_found("/static/" + name, head)
            return
        body, kind = found
        self.send_body(HTTPStatus.OK, body, kind, head=head, extra={"Cache-Control": "no-cache"})

    def send_api(self, name: str, params: Mapping[str, list[str]], head: bool) -> None:
        source = self.server.source
        routes = {
            "config": source.config,
            "recall": source.recall,
            "rows": source.rows,
            "log": source.log,
            "tiers": source.tiers,
        }
        handler = routes.get(name)
        if handler is None:
            self.send_not_found("/api/" + name, head)
            return
        try:
            payload = handler(params)
        except (InvalidInput, NotFound) as exc:
            status = HTTPStatus.CONFLICT if isinstance(exc, ResultGone) else HTTPStatus.BAD_REQUEST
            reason = getattr(exc, "reason", "not found")
            self.send_error_json(status, exc.field, exc.value, reason, str(exc), head=head)
            return
        except MemcommitError as exc:
            field = getattr(exc, "field", None)
            reason = getattr(exc, "reason", str(exc))
            self.send_error_json(
                HTTPStatus.INTERNAL_SERVER_ERROR, field, None, reason, str(exc), head=head
            )
            return
        except Exception as exc:  # a bug: keep serving, say so on the page and the terminal
            traceback.print_exc(file=sys.stderr)
            reason = f"internal error: {exc!r}"
            self.send_error_json(HTTPStatus.INTERNAL_SERVER_ERROR, None, None, reason, head=head)
            return
        self.send_json(HTTPStatus.OK, payload, head=head)

    def send_error_json(
        self,
        status: HTTPStatus,
        field: str | None,
        value: Any,
        reason: str,
        message: str | None = None,
        *,
        head: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        """The documented error body: ``field``, ``value`` (as text), the bare ``reason``,
        and ``message`` (default: ``field='value': reason``, or the reason alone)."""
        shown = None if value is None else str(value)
        if message is None:
            message = reason if field is None else f"{field}={shown!r}: {reason}"
        error = {"field": field, "value": shown, "reason": reason, "message": message}
        self.send_json(status, {"error": error}, head=head, extra=extra)

    def send_json(
        self,
        status: HTTPStatus,
        payload: Any,
        *,
        head: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        body = json.dumps(payload, ensure_ascii=False, allow_nan=False, default=str).encode()
        headers = {"Cache-Control": "no-store", **(extra or {})}
        self.send_body(status, body, "application/json; charset=utf-8", head=head, extra=headers)

    def send_body(
        self,
        status: HTTPStatus,
        body: bytes,
        kind: str,
        *,
        head: bool,
        extra: Mapping[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in {**SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)


def make_server(source: WorkbenchSource, host: str = "127.0.0.1", port: int = 0) -> WorkbenchServer:
    """A server bound to ``host:port`` (port 0 picks a free one); call serve_forever()."""
    return WorkbenchServer((host, port), source)
