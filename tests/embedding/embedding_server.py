"""A tiny OpenAI-compatible ``/v1/embeddings`` server on a real socket, for the HTTP tests.

It answers with `HashEmbedder` vectors scaled by three, or by ``scale`` (so the
client's scaling to unit length is exercised), in reverse index order (so the client's sorting is),
and can be told to misbehave: a wrong size, an error status, one vector short,
indices that are not the ints 0 to n-1 once each, a number no float holds, empty
vectors.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from memcommit.embedding.hashed import HashEmbedder


class EmbeddingsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, dims: int) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.embedder = HashEmbedder(dims=dims)
        self.mode = "ok"
        self.scale = 3.0  # what the unit vectors are multiplied by before they are sent
        self.requests: list[dict] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: EmbeddingsServer

    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        mode = self.server.mode
        if self.path != "/v1/embeddings" or mode == "error":
            self._send(500 if mode == "error" else 404, {"error": {"message": "no such thing"}})
            return
        texts = body["input"]
        unit = np.asarray(self.server.embedder.embed(texts), dtype=np.float64)
        vectors = unit * self.server.scale
        if mode == "wrong-dims":
            vectors = vectors[:, :-1]
        rows: list[list] = [[float(x) for x in vector] for vector in vectors]
        indices: list = list(range(len(texts)))
        if mode == "string-index":  # "10" sorts before "2" as text
            indices = [str(i) for i in indices]
        elif mode == "bool-index":
            indices = [bool(i) if i < 2 else i for i in indices]
        elif mode == "duplicate-index":
            indices = [0 for _ in indices]
        elif mode == "huge":
            rows[0][0] = 10**400  # a JSON number no float holds
        elif mode == "empty":
            rows = [[] for _ in rows]
        data = [
            {"object": "embedding", "index": indices[i], "embedding": rows[i]}
            for i in reversed(range(len(texts)))
        ]
        if mode == "short":
            data = data[1:]
        self._send(200, {"object": "list", "data": data, "model": body["model"]})

    def _send(self, status: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@contextmanager
def embeddings_server(dims: int = 16) -> Iterator[EmbeddingsServer]:
    """A running server on a free port of 127.0.0.1, shut down after the block."""
    server = EmbeddingsServer(dims)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
