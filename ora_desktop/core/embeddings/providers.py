"""The providers themselves: the bundled WordLlama model, an HTTP endpoint, fastembed."""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

from ..extras import need
from .base import EmbeddingError, Provider, normalize

DEFAULT_MODEL = "l2_supercat"
DEFAULT_DIMENSIONS = 256
POOL_TEXTS = 256
#: Texts are embedded from their first MAX_CHARS characters (a mean over more words says no more).
MAX_CHARS = 8192
#: Distinct words (pieces) whose token sums are kept (256 floats each: 64k = 64 MB at most).
PIECE_CAPACITY = 65536
#: A piece: a run of word-start marks and the characters up to the next one (see PieceTable).
PIECES = re.compile("\u2581*[^\u2581]+|\u2581+")


class WordLlamaProvider:
    """The model shipped in the ``wordllama`` wheel (token embeddings, mean-pooled).

    Its own loader looks for the bundled tokenizer in the wrong folder and then downloads:
    we point it at the package folder and forbid downloads. Pooling is done here over the
    unpadded token ids (``np.add.reduceat``), the same mean as wordllama's padded pooling at
    a fraction of the work, one cached word at a time (:class:`PieceTable`).
    """

    name = "wordllama"

    def __init__(self, model: str = DEFAULT_MODEL, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        self.weights = model
        self.dimensions = int(dimensions)
        if not 0 < self.dimensions <= DEFAULT_DIMENSIONS:
            raise EmbeddingError(f"wordllama dimensions must be 1-{DEFAULT_DIMENSIONS}, not {dimensions}")
        # The name recorded with the vectors: truncated vectors are another model's.
        self.model = model if self.dimensions == DEFAULT_DIMENSIONS else f"{model}@{self.dimensions}"
        self._lock = threading.Lock()
        self._loaded: Any = None
        self._pieces: PieceTable | None = None

    def _load(self) -> Any:
        with self._lock:
            if self._loaded is None:
                wordllama = need("wordllama", "meaning")
                WordLlama = wordllama.WordLlama  # noqa: N806 (the class)
                folder = Path(wordllama.__file__).parent
                try:
                    self._loaded = WordLlama.load(config=self.weights, cache_dir=folder, disable_download=True,
                                                  dim=DEFAULT_DIMENSIONS)
                except Exception as exc:  # wordllama raises plain exceptions of several kinds
                    raise EmbeddingError(f"the bundled {self.weights} model could not be loaded from {folder}: {exc}") \
                        from exc
            return self._loaded

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of ``texts`` (an empty text gives a zero row)."""
        model = self._load()
        with self._lock:
            if self._pieces is None:
                self._pieces = PieceTable(model.tokenizer.model, model.embedding[:, :self.dimensions])
            pieces = self._pieces
            out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
            for start in range(0, len(texts), POOL_TEXTS):
                pieces.pool(texts[start:start + POOL_TEXTS], out[start:start + POOL_TEXTS])
        return normalize(out)


class PieceTable:
    """Mean-pooled token vectors of texts, one cached word ("piece") at a time.

    The bundled tokenizer has no pre-tokenizer: it runs BPE over each whole text, so its word
    cache never hits (~20x slower than the pooling itself). Its normalizer turns spaces into
    ``\u2581`` and no vocabulary entry holds a ``\u2581`` after another character, so no merge
    crosses a word start: BPE of each ``\u2581``-led piece alone gives the same ids
    (``tests/unit/test_embeddings.py`` checks it against the tokenizer). Each distinct piece is
    tokenized once and kept as the sum of its token vectors and its token count, so a text is
    the sum of a few rows divided by its token count — the same mean as pooling the tokens.
    """

    def __init__(self, bpe: Any, table: np.ndarray, capacity: int = PIECE_CAPACITY) -> None:
        self.bpe = bpe
        self.table = table
        self.capacity = capacity
        self.row_of: dict[str, int] = {}
        self.sums = np.zeros((min(capacity, 4096), table.shape[1]), dtype=np.float32)
        self.counts = np.zeros(len(self.sums), dtype=np.float32)

    def _row(self, piece: str) -> int:
        """The row of ``piece``'s token sum, made on first sight."""
        row = self.row_of.get(piece)
        if row is not None:  # a new piece seen twice in one text
            return row
        row = len(self.row_of)
        if row >= len(self.sums):
            grown = min(self.capacity, 2 * len(self.sums))
            self.sums = np.resize(self.sums, (grown, self.sums.shape[1]))
            self.counts = np.resize(self.counts, grown)
        ids = np.fromiter((t.id for t in self.bpe.tokenize(piece)), dtype=np.int64)
        np.clip(ids, 0, len(self.table) - 1, out=ids)
        self.sums[row] = self.table[ids].sum(axis=0)
        self.counts[row] = len(ids)
        self.row_of[piece] = row
        return row

    def pool(self, texts: list[str], out: np.ndarray) -> None:
        """Mean token vector of each text into ``out`` (texts longer than MAX_CHARS are cut there)."""
        rows: list[int] = []
        lengths: list[int] = []
        for i, text in enumerate(texts):
            text = text if isinstance(text, str) else str(text)
            pieces = PIECES.findall("\u2581" + text[:MAX_CHARS].replace(" ", "\u2581")) if text else []
            if len(self.row_of) + len(pieces) > self.capacity:  # a cache: start over, not grow for ever
                self._sum(rows, lengths, out[:i])
                rows, lengths = [], [0] * i
                self.row_of.clear()
            get = self.row_of.get
            found = [get(p) for p in pieces]
            if None in found:
                found = [r if r is not None else self._row(p) for r, p in zip(found, pieces, strict=True)]
            rows.extend(found)
            lengths.append(len(found))
        self._sum(rows, lengths, out)

    def _sum(self, rows: list[int], lengths: list[int], out: np.ndarray) -> None:
        """``out[i]`` = mean of the tokens of the ``lengths[i]`` pieces taken in turn from ``rows``
        (a text with no pieces is left as it is)."""
        if not rows:
            return
        index = np.fromiter(rows, dtype=np.int64, count=len(rows))
        counts = np.fromiter(lengths, dtype=np.int64, count=len(lengths))
        present = counts > 0
        offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))[present]
        sums = np.add.reduceat(self.sums[index], offsets, axis=0)
        tokens = np.add.reduceat(self.counts[index], offsets)
        out[present] = sums / np.maximum(tokens, 1.0)[:, None]


class HttpProvider:
    """An OpenAI-compatible embeddings endpoint (``POST {url}/embeddings``).

    ``api_key`` (or the environment variable named by ``key_env``) is sent as a bearer token
    and never appears in a message, a log or ``repr``.
    """

    name = "http"

    def __init__(self, url: str, model: str, dimensions: int | None = None, api_key: str | None = None,
                 key_env: str = "ORA_DESKTOP_EMBEDDINGS_KEY", timeout: float = 30.0, batch: int = 256) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self._key = api_key if api_key is not None else os.environ.get(key_env) or None
        self.timeout = timeout
        self.batch = batch
        self.dimensions = int(dimensions) if dimensions else 0

    def __repr__(self) -> str:
        return f"<HttpProvider {self.url} model={self.model!r}>"

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors from the endpoint, batch by batch."""
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch):
            rows.append(self._post(texts[start:start + self.batch]))
        if not rows:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        matrix = np.vstack(rows)
        self.dimensions = matrix.shape[1]
        return normalize(matrix)

    def _post(self, texts: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.model, "input": texts}).encode()
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(f"{self.url}/embeddings", data=body, headers=headers, method="POST")
        where = f"the embeddings endpoint {self.url}"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EmbeddingError(f"{where} answered HTTP {exc.code} ({exc.reason})") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EmbeddingError(f"{where} cannot be reached ({reason})") from None
        except ValueError:
            raise EmbeddingError(f"{where} did not answer JSON") from None
        try:
            data = sorted(payload["data"], key=lambda item: item.get("index", 0))
            matrix = np.asarray([item["embedding"] for item in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError):
            raise EmbeddingError(f"{where} answered without a list of embeddings") from None
        if matrix.ndim != 2 or matrix.shape[0] != len(texts):
            raise EmbeddingError(f"{where} returned {matrix.shape[0] if matrix.ndim else 0} vectors "
                                 f"for {len(texts)} texts")
        return matrix


class FastEmbedProvider:
    """``fastembed`` (optional extra ``ora-desktop[fastembed]``; downloads its model once)."""

    name = "fastembed"

    def __init__(self, model: str = "BAAI/bge-small-en-v1.5") -> None:
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:
            raise EmbeddingError("fastembed is not installed (pip install 'ora-desktop[fastembed]')") from exc
        self.model = model
        try:
            self._model = TextEmbedding(model_name=model)
        except Exception as exc:  # network, unknown model name
            raise EmbeddingError(f"fastembed could not load {model}: {exc}") from exc
        self.dimensions = int(self.embed(["x"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        return normalize(np.asarray(list(self._model.embed(list(texts))), dtype=np.float32))


_default: WordLlamaProvider | None = None


def default_provider() -> WordLlamaProvider:
    """The process-wide bundled model (loaded on first use)."""
    global _default
    if _default is None:
        _default = WordLlamaProvider()
    return _default


def provider_from_config(table: dict[str, Any] | None) -> Provider:
    """The provider an ``[embeddings]`` config table asks for (``provider = "wordllama" | "http" |
    "fastembed"``; ``model``, ``url``, ``api_key``/``key_env``, ``dimensions``)."""
    table = dict(table or {})
    kind = str(table.get("provider", "wordllama"))
    if kind == "wordllama":
        if not table.get("model") and not table.get("dimensions"):
            return default_provider()
        return WordLlamaProvider(str(table.get("model", DEFAULT_MODEL)), int(table.get("dimensions", 256)))
    if kind == "http":
        if not table.get("url") or not table.get("model"):
            raise EmbeddingError("[embeddings] provider = \"http\" needs url and model")
        return HttpProvider(str(table["url"]), str(table["model"]), table.get("dimensions"),
                            table.get("api_key"), str(table.get("key_env", "ORA_DESKTOP_EMBEDDINGS_KEY")))
    if kind == "fastembed":
        return FastEmbedProvider(str(table.get("model", "BAAI/bge-small-en-v1.5")))
    raise EmbeddingError(f"[embeddings] provider {kind!r} is not one of wordllama, http, fastembed")


_configured: tuple[tuple, Provider] | None = None


def configured_provider() -> Provider:
    """The provider the user's config asks for (``[embeddings]``), the bundled model by default.
    Re-read only when the config file changes."""
    global _configured
    from ..config import Config, config_path

    path = config_path()
    try:
        st = path.stat()
        key: tuple = (str(path), st.st_mtime_ns, st.st_size)
    except OSError:
        key = (str(path), None, None)
    if _configured is not None and _configured[0] == key:
        return _configured[1]
    table = Config.load(path)._table("embeddings") if key[1] is not None else {}
    provider = provider_from_config(table)
    _configured = (key, provider)
    return provider
